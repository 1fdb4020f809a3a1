// liblimbic_pdf.so: the text of a PDF through poppler's C++ library, in a
// module of its own so that poppler and the ~25 libraries it brings
// (fontconfig, freetype, nss, ...) load only when a PDF is ingested, not
// with every command (memory/pdf.h loads it). One function, C linkage so
// dlsym finds it by name; it takes and gives std::string because the
// module is always built with the binary that loads it.
#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <climits>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

// On success returns 0 and sets *text (pages joined by "\n\n"). Otherwise
// returns 1 and sets *why: "" when poppler cannot open the PDF (damaged,
// or locked by a password), "page N" when page N (from 1) cannot be read,
// or the message of what was thrown.
extern "C" int limbic_pdf_text(const std::string* raw, std::string* text, std::string* why) {
  // poppler reports damaged files on stderr by default; the caller gets an
  // error instead, so its chatter is noise. The hook is process-wide.
  static std::once_flag once;
  std::call_once(
      once, [] { poppler::set_debug_error_function([](const std::string&, void*) {}, nullptr); });
  if (raw->size() > static_cast<size_t>(INT_MAX)) return 1;
  // poppler-cpp is not documented to throw, but it allocates; nothing it
  // throws may leave this module.
  try {
    // load_from_raw_data does not copy: `raw` outlives `doc` here.
    std::unique_ptr<poppler::document> doc(
        poppler::document::load_from_raw_data(raw->data(), static_cast<int>(raw->size())));
    // A PDF encrypted with an empty user password opens unlocked and is
    // read; only one that needs a password we do not have is refused.
    if (!doc || doc->is_locked()) return 1;
    text->clear();
    for (int i = 0; i < doc->pages(); ++i) {
      if (i > 0) *text += "\n\n";
      std::unique_ptr<poppler::page> page(doc->create_page(i));
      if (!page) {
        *why = "page " + std::to_string(i + 1);
        return 1;
      }
      poppler::byte_array utf8 = page->text().to_utf8();
      text->append(utf8.data(), utf8.size());
    }
    return 0;
  } catch (const std::exception& e) {
    *why = e.what();
    return 1;
  }
}
