// Umbrella header: the whole public API of tally.
#ifndef TALLY_TALLY_H_
#define TALLY_TALLY_H_

#include "tally/admin.h"
#include "tally/backup.h"
#include "tally/batch.h"
#include "tally/checkpoint.h"
#include "tally/db.h"
#include "tally/dump.h"
#include "tally/import.h"
#include "tally/limits.h"
#include "tally/options.h"
#include "tally/outbox.h"
#include "tally/status.h"
#include "tally/sync.h"
#include "tally/text.h"
#include "tally/types.h"
#include "tally/version.h"

#endif  // TALLY_TALLY_H_
