// xffl-topo: the plan of every rank of an xffl job (DESIGN.md section 6), with no process started.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "formats.h"
#include "planner.h"

namespace {

int fail(const std::string &message) {
  std::cerr << "xffl-topo: error: " << message << "\n";
  return 2;
}

// Streams the document: a JSON plan of a large world is far bigger than anything worth holding.
void render(std::ostream &out, const xffl_topo::Options &options) {
  using namespace xffl_topo;
  switch (options.format) {
    case Format::Json: write_json(out, options); break;
    case Format::Text: write_text(out, options); break;
    case Format::Dot: write_dot(out, plan_world(options), options); break;
    case Format::Svg: write_svg(out, plan_world(options), options); break;
  }
}

}  // namespace

int main(int argc, char **argv) {
  using namespace xffl_topo;
  try {
    const Options options = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << usage_text();
      return 0;
    }
    // The layout is checked on the rank asked about (or rank 0) before any output, so an invalid input
    // gives the library's message for that rank and never leaves half a document behind.
    plan_rank(options, options.rank.value_or(0));
    if (options.output.empty()) {
      std::ios::sync_with_stdio(false);
      render(std::cout, options);
      std::cout.flush();
      return std::cout ? 0 : fail("cannot write standard output");
    }
    std::ofstream file(options.output, std::ios::binary);
    if (!file) return fail("cannot open " + options.output + ": " + std::strerror(errno));
    render(file, options);
    file.close();
    if (!file) return fail("cannot write " + options.output);
    return 0;
  } catch (const UsageError &e) {
    return fail(e.what());
  } catch (const LibraryError &e) {
    return fail(e.what());
  } catch (const std::bad_alloc &) {
    return fail("out of memory (a JSON plan of a large world holds every rank's mesh)");
  } catch (const std::exception &e) {
    return fail(e.what());
  }
}
