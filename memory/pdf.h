// The text of a PDF, through liblimbic_pdf.so (memory/pdf_module.cc), which
// is loaded with dlopen on the first call: poppler and the libraries it
// brings cost every other command nothing.
//
// The module is looked for next to the running program
// (dirname(/proc/self/exe)/liblimbic_pdf.so), then where the build put it
// (LIMBIC_PDF_MODULE, set by CMake). When neither loads, every PDF is
// refused with Unavailable naming the places tried and dlopen's error.
//
// Errors name the path: a PDF poppler cannot open (damaged, or encrypted
// with a password; one encrypted with an empty user password is read) or
// whose text is not UTF-8 is InvalidArgument "PATH: not a readable PDF".
//
// Thread-safety: any thread; the module is loaded once.
#pragma once

#include <string>

#include "base/status.h"

namespace limbic::memory {

Result<std::string> PdfText(const std::string& path, const std::string& raw);

}  // namespace limbic::memory
