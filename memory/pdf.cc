#include "memory/pdf.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <vector>

namespace limbic::memory {
namespace {

using PdfTextFn = int (*)(const std::string*, std::string*, std::string*);

struct Module {
  PdfTextFn fn = nullptr;
  std::string error;  // why it did not load
};

const Module& Load() {
  static const Module module = [] {
    Module m;
    std::vector<std::string> places;
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) places.push_back((self.parent_path() / "liblimbic_pdf.so").string());
#ifdef LIMBIC_PDF_MODULE
    places.push_back(LIMBIC_PDF_MODULE);
#endif
    std::string tried;
    for (const auto& place : places) {
      // RTLD_LOCAL: poppler's symbols stay out of the program's namespace.
      if (void* handle = dlopen(place.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        if ((m.fn = reinterpret_cast<PdfTextFn>(dlsym(handle, "limbic_pdf_text")))) return m;
        tried += (tried.empty() ? "" : "; ") + place + ": no limbic_pdf_text";
        continue;
      }
      const char* why = dlerror();
      tried += (tried.empty() ? "" : "; ") + (why ? std::string(why) : place);
    }
    m.error = "PDF support (liblimbic_pdf.so) did not load: " + tried;
    return m;
  }();
  return module;
}

}  // namespace

Result<std::string> PdfText(const std::string& path, const std::string& raw) {
  const Module& m = Load();
  if (!m.fn) return Status::Unavailable(path + ": " + m.error);
  std::string text, why;
  const Status unreadable = Status::InvalidArgument(path + ": not a readable PDF");
  if (m.fn(&raw, &text, &why) != 0)
    return why.empty() ? unreadable : unreadable.WithMessage(path + ": not a readable PDF (" + why + ")");
  return text;
}

}  // namespace limbic::memory
