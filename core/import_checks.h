// The checks of an import (tally::ImportCounter, docs/format.md): every
// value, key and marker of an exported counter against its counter, before
// any backend writes anything, so that both backends refuse the same
// exports with the same messages.
//
// Thread safety: pure functions.

#ifndef TALLY_CORE_IMPORT_CHECKS_H_
#define TALLY_CORE_IMPORT_CHECKS_H_

#include "tally/import.h"
#include "tally/status.h"

namespace tally::core {

// InvalidArgument (or NotSupported, for bucketed values) naming what is
// wrong with `im`; OK when a backend may write it.
Status ValidateImport(const CounterImport& im);

}  // namespace tally::core

#endif  // TALLY_CORE_IMPORT_CHECKS_H_
