// The cluster client of a test that plants states as a client of the
// backend would have left them: connected as the target's app user, with
// the target namespace's key names (cluster/keys.h). Used by the tests
// that put the database in the states a crashed client leaves.

#ifndef TALLY_TESTS_CLUSTER_APP_CLIENT_H_
#define TALLY_TESTS_CLUSTER_APP_CLIENT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "cluster/keys.h"
#include "cluster/target.h"
#include "tally/status.h"

namespace tally::test {

// Connects *client to `target`'s cluster as its user (the password from
// TALLY_REDIS_PASSWORD_FILE) and sets *keys to its namespace's.
inline Status ConnectAppClient(const std::string& target,
                               std::unique_ptr<cluster::KeySpace>* keys,
                               std::unique_ptr<cluster::ClusterClient>* client) {
  cluster::Target t;
  Status s = cluster::ParseTarget(target, &t);
  if (!s.ok()) return s;
  *keys = std::make_unique<cluster::KeySpace>(t.ns);
  cluster::ClientOptions o;
  o.seeds = t.seeds;
  o.user = t.user;
  s = cluster::ReadPassword(&o.password);
  return s.ok() ? cluster::ClusterClient::Connect(o, client) : s;
}

// One command on the node of `key`'s slot; its reply (an empty one when
// the client failed).
inline cluster::Reply CallOn(cluster::ClusterClient* client,
                             std::vector<std::string> args,
                             const std::string& key) {
  cluster::Command c;
  c.args = std::move(args);
  c.slot = cluster::ClusterClient::SlotOf(key);
  std::vector<cluster::Reply> replies;
  const Status s = client->Run({c}, &replies);
  return s.ok() && !replies.empty() ? replies[0] : cluster::Reply();
}

}  // namespace tally::test

#endif  // TALLY_TESTS_CLUSTER_APP_CLIENT_H_
