// Test helper: a minimal PDF, for ingest's tests (unit and integration).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace limbic::testing {

// A minimal PDF 1.4: one page per entry of `page_texts`, Helvetica, and an
// xref table whose offsets are taken while the file is built.
inline std::string MakePdf(const std::vector<std::string>& page_texts) {
  std::string pdf = "%PDF-1.4\n";
  std::vector<size_t> offsets;  // offsets[i] is object i+1
  auto object = [&](const std::string& body) {
    offsets.push_back(pdf.size());
    pdf += std::to_string(offsets.size()) + " 0 obj\n" + body + "\nendobj\n";
  };
  size_t pages = page_texts.size();
  // Objects: 1 catalog, 2 pages, 3 font, then per page: page, contents.
  std::string kids;
  for (size_t i = 0; i < pages; ++i) kids += std::to_string(4 + 2 * i) + " 0 R ";
  object("<< /Type /Catalog /Pages 2 0 R >>");
  object("<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages) + " >>");
  object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (size_t i = 0; i < pages; ++i) {
    object(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 "
        "R >> >> /Contents " +
        std::to_string(5 + 2 * i) + " 0 R >>");
    std::string stream = "BT /F1 12 Tf 72 720 Td (" + page_texts[i] + ") Tj ET";
    object("<< /Length " + std::to_string(stream.size()) + " >>\nstream\n" + stream +
           "\nendstream");
  }
  size_t xref = pdf.size();
  pdf += "xref\n0 " + std::to_string(offsets.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t off : offsets) {
    char entry[21];
    std::snprintf(entry, sizeof entry, "%010zu 00000 n \n", off);
    pdf += entry;
  }
  pdf += "trailer\n<< /Size " + std::to_string(offsets.size() + 1) +
         " /Root 1 0 R >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return pdf;
}


}  // namespace limbic::testing
