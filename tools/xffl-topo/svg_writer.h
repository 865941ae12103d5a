// A minimal SVG element writer: escaped text, numbers without noise. Keeps svg_format.cpp about the
// picture rather than about angle brackets.
#ifndef XFFL_TOOLS_TOPO_SVG_WRITER_H
#define XFFL_TOOLS_TOPO_SVG_WRITER_H

#include <sstream>
#include <string>

namespace xffl_topo {

std::string xml_escape(const std::string &text);

// Rough width of text in the sans-serif font used by the pictures (no font metrics at hand).
double text_width(const std::string &text, double font_size);

class SvgWriter {
 public:
  // style: extra attributes, already escaped (e.g. fill="#fff" stroke="#000").
  void rect(double x, double y, double w, double h, double radius, const std::string &style);
  void line(double x1, double y1, double x2, double y2, const std::string &style);
  void circle(double cx, double cy, double r, const std::string &style);
  void path(const std::string &d, const std::string &style);
  // anchor: start, middle or end.
  void text(double x, double y, const std::string &content, double size, const std::string &style = "",
            const char *anchor = "start");
  void raw(const std::string &markup) { body_ << markup; }
  // The whole document, with a title for screen readers and a white background.
  std::string document(double width, double height, const std::string &title) const;

 private:
  std::ostringstream body_;
};

std::string num(double value);

}  // namespace xffl_topo

#endif
