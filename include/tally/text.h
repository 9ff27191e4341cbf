// The control-character rule for text tally stores (counter names, keys,
// event, reset and reservation ids, claim holders): no C0 control (U+0000..
// U+001F), no DEL (U+007F) and no C1 control (U+0080..U+009F, which holds
// the terminal's escape introducer U+009B and the line break U+0085), so
// stored text is safe to print on a terminal and one line in every listing.
// One place for the rule: the engine validates with it, counterctl checks
// apply lines and escapes what it prints with it.
//
// Thread safety: pure functions.

#ifndef TALLY_TEXT_H_
#define TALLY_TEXT_H_

#include <cstddef>
#include <string_view>

namespace tally {

// The length in bytes of the control character starting at s[i] (1 for C0
// and DEL, 2 for a C1 control in UTF-8: 0xC2 0x80..0x9F), or 0 when s[i]
// starts none.
inline size_t ControlCharacterAt(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x20 || b == 0x7f) return 1;
  if (b == 0xc2 && i + 1 < s.size()) {
    const auto n = static_cast<unsigned char>(s[i + 1]);
    if (n >= 0x80 && n <= 0x9f) return 2;
  }
  return 0;
}

// Whether `s` holds a control character by the rule above.
inline bool HasControlCharacter(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (ControlCharacterAt(s, i) != 0) return true;
  }
  return false;
}

}  // namespace tally

#endif  // TALLY_TEXT_H_
