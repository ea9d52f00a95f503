// render_graph.hpp: gvc's layout and renderers, through its C interface.
#include "attn/render/render_graph.hpp"

#include <memory>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "attn/compute/error.hpp"

namespace attn {

void draw_graph(const std::string& dot, std::string_view format, std::ostream& out) {
    const std::unique_ptr<GVC_t, int (*)(GVC_t*)> gvc(gvContext(), gvFreeContext);
    if (!gvc) throw error("--graph: Graphviz could not start");
    const std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> graph(agmemread(dot.c_str()), agclose);
    if (!graph) throw error("--graph: Graphviz could not read the run's graph");
    if (gvLayout(gvc.get(), graph.get(), "dot") != 0) throw error("--graph: Graphviz's dot layout is not installed");
    char* data = nullptr;
    unsigned int length = 0;
    const std::string renderer(format);
    const int failed = gvRenderData(gvc.get(), graph.get(), renderer.c_str(), &data, &length);
    gvFreeLayout(gvc.get(), graph.get());
    if (failed != 0 || data == nullptr) {
        if (data != nullptr) gvFreeRenderData(data);
        throw error("--graph: Graphviz has no " + renderer + " renderer here (its plugins: libgvc6)");
    }
    out.write(data, static_cast<std::streamsize>(length));
    gvFreeRenderData(data);
}

}  // namespace attn
