/* The order counter of docs/embedding.md, in C (tally/c.h): each order's
 * "accepted" event is delivered twice (at-least-once delivery) and counted
 * once, with its amount, in one atomic write. 40 orders: the counter ends
 * at 40, with 40 markers, and the revenue is the sum of the amounts.
 *
 * Build against an installed tally:
 *   cc orders.c $(pkg-config --cflags --libs tally-c) -o orders-c
 * Run: ./orders-c DB_DIR */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <tally/c.h>

enum { ORDERS = 40 };

static int64_t amount_cents(int order) { return 1000 + 25 * order; }

/* Prints the error, frees it, and says whether the call failed. */
static int failed(tally_code code, char* err) {
  if (code == TALLY_OK) return 0;
  fprintf(stderr, "orders-c: %s\n", err ? err : tally_code_name(code));
  tally_free(err);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DB_DIR\n", argv[0]);
    return 2;
  }
  char* err = NULL;
  tally_db* db = NULL;
  if (failed(tally_open(NULL, argv[1], &db, &err), err)) return 1;
  tally_counter_spec spec;
  tally_counter_spec_init(&spec);
  spec.shards = 10;
  const char* names[2] = {"orders-today", "revenue-cents"};
  for (int i = 0; i < 2; ++i) {
    tally_code c = tally_create_counter(db, names[i], strlen(names[i]), &spec,
                                        &err);
    if (c == TALLY_ALREADY_EXISTS) { /* a second run */
      tally_free(err);
      continue;
    }
    if (failed(c, err)) return 1;
  }
  tally_batch* batch = tally_batch_create();
  for (int delivery = 0; delivery < 2 * ORDERS; ++delivery) {
    const int order = delivery % ORDERS;
    char id[40];
    snprintf(id, sizeof id, "ORDER_ACCEPTED:ord-%04d", order);
    tally_batch_clear(batch);
    if (failed(tally_batch_add_once(batch, names[0], strlen(names[0]), NULL, 0,
                                    id, strlen(id), 1, NULL, &err), err) ||
        failed(tally_batch_add_once(batch, names[1], strlen(names[1]), NULL, 0,
                                    id, strlen(id), amount_cents(order), NULL,
                                    &err), err) ||
        failed(tally_apply(db, batch, NULL, 0, &err), err)) {
      return 1;
    }
  }
  tally_batch_destroy(batch);
  int64_t orders = 0, revenue = 0, expected = 0;
  uint64_t markers = 0;
  if (failed(tally_read_exact(db, names[0], strlen(names[0]), NULL, 0, &orders,
                              &err), err) ||
      failed(tally_read_exact(db, names[1], strlen(names[1]), NULL, 0,
                              &revenue, &err), err) ||
      failed(tally_count_markers(db, names[0], strlen(names[0]), NULL, 0,
                                 &markers, &err), err)) {
    return 1;
  }
  tally_close(db);
  for (int i = 0; i < ORDERS; ++i) expected += amount_cents(i);
  printf("orders %" PRId64 ", markers %" PRIu64 ", revenue %" PRId64
         " cents\n", orders, markers, revenue);
  if (orders != ORDERS || markers != ORDERS || revenue != expected) {
    fprintf(stderr, "orders-c: WRONG (want 40, 40, %" PRId64 ")\n", expected);
    return 1;
  }
  return 0;
}
