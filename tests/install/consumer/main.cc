// Opens a database through the installed headers and library: the package
// config gives the include path, the C++17 requirement and the link line.
#include <tally/tally.h>

#include <cstdio>
#include <memory>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::unique_ptr<tally::Db> db;
  tally::Status s = tally::Db::Open(tally::Options(), argv[1], &db);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
