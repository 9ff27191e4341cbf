// The counting rules (core/) as the engine names them: every core/ header
// the engine uses, and core's names visible in tally::engine, so engine
// code calls core::Decide as Decide. One place, so that no engine file
// reaches core/ another way.

#ifndef TALLY_ENGINE_RULES_H_
#define TALLY_ENGINE_RULES_H_

#include "core/bounds.h"
#include "core/buckets.h"
#include "core/claims.h"
#include "core/deadline.h"
#include "core/decide.h"
#include "core/hash.h"
#include "core/holds.h"
#include "core/shard_picker.h"
#include "core/top_keys.h"
#include "core/validate.h"
#include "core/write_op.h"

namespace tally::engine {
using namespace ::tally::core;  // NOLINT(build/namespaces): see above
}  // namespace tally::engine

#endif  // TALLY_ENGINE_RULES_H_
