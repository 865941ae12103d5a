// The four output formats of xffl-topo. Each writes one complete document to out.
#ifndef XFFL_TOOLS_TOPO_FORMATS_H
#define XFFL_TOOLS_TOPO_FORMATS_H

#include <ostream>

#include "cli.h"
#include "world.h"

namespace xffl_topo {

// An array of xffl_state_describe(JSON) objects, one per rank; with --rank the one object.
void write_json(std::ostream &out, const Options &options);

// With --rank: xffl_state_describe(TEXT) of that rank. Otherwise the layout summary, a picture of each
// facility's mesh (small worlds) and one table row per rank.
void write_text(std::ostream &out, const Options &options);
void write_text_world(std::ostream &out, const World &world);

// Graphviz source: facilities as clusters, replicas as rows, shards as columns, senders filled,
// FEDERATED groups as edges between facilities, receive_from as faint arrows, a legend.
void write_dot(std::ostream &out, const World &world, const Options &options);

// A self-contained SVG of the same picture, drawn on a grid (no graphviz at run time).
void write_svg(std::ostream &out, const World &world, const Options &options);

}  // namespace xffl_topo

#endif
