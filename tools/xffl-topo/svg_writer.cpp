#include "svg_writer.h"

#include <cmath>
#include <cstdio>

namespace xffl_topo {

std::string xml_escape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

double text_width(const std::string &text, double font_size) {
  // Count UTF-8 code points, not bytes: the pictures use a few non-ASCII signs.
  std::size_t glyphs = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++glyphs;
  return static_cast<double>(glyphs) * font_size * 0.6;
}

std::string num(double value) {
  char buf[32];
  if (std::fabs(value - std::round(value)) < 1e-6)
    std::snprintf(buf, sizeof buf, "%.0f", value);
  else
    std::snprintf(buf, sizeof buf, "%.1f", value);
  return buf;
}

void SvgWriter::rect(double x, double y, double w, double h, double radius, const std::string &style) {
  body_ << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\"" << num(h)
        << "\"";
  if (radius > 0) body_ << " rx=\"" << num(radius) << "\"";
  body_ << " " << style << "/>\n";
}

void SvgWriter::line(double x1, double y1, double x2, double y2, const std::string &style) {
  body_ << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2)
        << "\" " << style << "/>\n";
}

void SvgWriter::circle(double cx, double cy, double r, const std::string &style) {
  body_ << "<circle cx=\"" << num(cx) << "\" cy=\"" << num(cy) << "\" r=\"" << num(r) << "\" " << style << "/>\n";
}

void SvgWriter::path(const std::string &d, const std::string &style) {
  body_ << "<path d=\"" << d << "\" " << style << "/>\n";
}

void SvgWriter::text(double x, double y, const std::string &content, double size, const std::string &style,
                     const char *anchor) {
  body_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << num(size) << "\"";
  if (std::string(anchor) != "start") body_ << " text-anchor=\"" << anchor << "\"";
  if (!style.empty()) body_ << " " << style;
  body_ << ">" << xml_escape(content) << "</text>\n";
}

std::string SvgWriter::document(double width, double height, const std::string &title) const {
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" viewBox=\"0 0 " << num(width) << " " << num(height) << "\""
      << " font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
      << "<title>" << xml_escape(title) << "</title>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << body_.str() << "</svg>\n";
  return out.str();
}

}  // namespace xffl_topo
