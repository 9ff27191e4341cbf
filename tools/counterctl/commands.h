// The subcommands of counterctl. main.cc declares each one's flags with
// CLI11 and fills its Args struct; the Run function (one cmd_*.cc each) does
// the work and returns the process exit code (see common.h).
//
// Flags that take numbers arrive as strings and are parsed strictly by the
// Run function, so "12abc" or "010" is a usage error rather than 12 or 8.

#ifndef TALLY_TOOLS_COUNTERCTL_COMMANDS_H_
#define TALLY_TOOLS_COUNTERCTL_COMMANDS_H_

#include <string>

#include "common.h"

namespace counterctl {

// create NAME --shards N [--policy random|affinity]
struct CreateArgs {
  std::string name;
  std::string shards;
  std::string policy = "random";
};
int RunCreate(const GlobalArgs& global, const CreateArgs& args);

// list
int RunList(const GlobalArgs& global);

// describe NAME
int RunDescribe(const GlobalArgs& global, const std::string& name);

// incr NAME [--by D] [--event-id ID] [--affinity KEY]
struct IncrArgs {
  std::string name;
  std::string by = "1";
  std::string event_id;
  bool has_event_id = false;
  std::string affinity_key;
  bool has_affinity_key = false;
};
int RunIncr(const GlobalArgs& global, const IncrArgs& args);

// get NAME
int RunGet(const GlobalArgs& global, const std::string& name);

// shards NAME
int RunShards(const GlobalArgs& global, const std::string& name);

// events NAME --count
struct EventsArgs {
  std::string name;
  bool count = false;
};
int RunEvents(const GlobalArgs& global, const EventsArgs& args);

// delete NAME --yes
struct DeleteArgs {
  std::string name;
  bool yes = false;
};
int RunDelete(const GlobalArgs& global, const DeleteArgs& args);

// apply --file F [--threads N] [--batch N]
struct ApplyArgs {
  std::string file;
  std::string threads = "1";
  std::string batch = "1000";
};
int RunApply(const GlobalArgs& global, const ApplyArgs& args);

// verify
int RunVerify(const GlobalArgs& global);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_COMMANDS_H_
