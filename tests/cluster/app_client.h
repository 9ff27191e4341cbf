// The cluster client a test of tests/cluster/ plants and inspects keys
// with, as a crashed client or an operator with redis-cli would see them:
// connected as the app user of a target (its password from
// TALLY_REDIS_PASSWORD_FILE, which test::ClusterTarget sets), with the key
// space of the target's namespace.

#ifndef TALLY_TESTS_CLUSTER_APP_CLIENT_H_
#define TALLY_TESTS_CLUSTER_APP_CLIENT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "cluster/keys.h"
#include "cluster/target.h"

namespace tally::test {

using cluster::ClientOptions;
using cluster::ClusterClient;
using cluster::Command;
using cluster::KeySpace;
using cluster::Reply;

inline Status ConnectAppClient(const std::string& target,
                               std::unique_ptr<KeySpace>* keys,
                               std::unique_ptr<ClusterClient>* client) {
  cluster::Target t;
  Status s = cluster::ParseTarget(target, &t);
  if (!s.ok()) return s;
  *keys = std::make_unique<KeySpace>(t.ns);
  ClientOptions o;
  o.seeds = t.seeds;
  o.user = t.user;
  s = cluster::ReadPassword(&o.password);
  return s.ok() ? ClusterClient::Connect(o, client) : s;
}

// One command on the node of `key`'s slot; its reply (an empty one when
// the client failed).
inline Reply CallOn(ClusterClient* client, std::vector<std::string> args,
                    const std::string& key) {
  Command c;
  c.args = std::move(args);
  c.slot = ClusterClient::SlotOf(key);
  std::vector<Reply> replies;
  const Status s = client->Run({c}, &replies);
  return s.ok() && !replies.empty() ? replies[0] : Reply();
}

}  // namespace tally::test

#endif  // TALLY_TESTS_CLUSTER_APP_CLIENT_H_
