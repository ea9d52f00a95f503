// viridis, sampled: 33 colours evenly spaced in [0, 1], linear in between (within
// 2/255 of matplotlib's 256-entry table everywhere).
#include "attn/render/colormap.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace attn {
namespace {

// matplotlib's _viridis_data (CC0, by Nathaniel J. Smith, Stefan van der Walt and
// Eric Firing), entry round(k * 255 / 32) for k = 0..32.
constexpr std::array<rgb, 33> viridis_stops{{
    {0.267004, 0.004874, 0.329415}, {0.277018, 0.050344, 0.375715}, {0.282327, 0.094955, 0.417331},
    {0.282884, 0.135920, 0.453427}, {0.278826, 0.175490, 0.483397}, {0.270595, 0.214069, 0.507052},
    {0.258965, 0.251537, 0.524736}, {0.244972, 0.287675, 0.537260}, {0.229739, 0.322361, 0.545706},
    {0.214298, 0.355619, 0.551184}, {0.199430, 0.387607, 0.554642}, {0.185556, 0.418570, 0.556753},
    {0.172719, 0.448791, 0.557885}, {0.160665, 0.478540, 0.558115}, {0.149039, 0.508051, 0.557250},
    {0.137770, 0.537492, 0.554906}, {0.127568, 0.566949, 0.550556}, {0.121148, 0.592739, 0.544641},
    {0.120081, 0.622161, 0.534946}, {0.130067, 0.651384, 0.521608}, {0.153894, 0.680203, 0.504172},
    {0.191090, 0.708366, 0.482284}, {0.239374, 0.735588, 0.455688}, {0.296479, 0.761561, 0.424223},
    {0.360741, 0.785964, 0.387814}, {0.430983, 0.808473, 0.346476}, {0.506271, 0.828786, 0.300362},
    {0.585678, 0.846661, 0.249897}, {0.668054, 0.861999, 0.196293}, {0.751884, 0.874951, 0.143228},
    {0.835270, 0.886029, 0.102646}, {0.916242, 0.896091, 0.100717}, {0.993248, 0.906157, 0.143936},
}};

double linear_channel(double c) {  // sRGB -> linear light
    return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

}  // namespace

std::uint8_t rgb::byte(double channel) {
    return static_cast<std::uint8_t>(std::lround(std::clamp(channel, 0.0, 1.0) * 255.0));
}

rgb viridis(double t) {
    if (!(t > 0.0)) return viridis_stops.front();  // also NaN
    if (t >= 1.0) return viridis_stops.back();
    const double x = t * (viridis_stops.size() - 1);
    const std::size_t k = static_cast<std::size_t>(x);
    const double f = x - static_cast<double>(k);
    const rgb& a = viridis_stops[k];
    const rgb& b = viridis_stops[k + 1];
    return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

double relative_luminance(const rgb& c) {
    return 0.2126 * linear_channel(c.r) + 0.7152 * linear_channel(c.g) + 0.0722 * linear_channel(c.b);
}

double value_scale::position(float v) const {
    if (!(hi > lo)) return 0.5;
    const double t = (static_cast<double>(v) - lo) / (static_cast<double>(hi) - lo);
    if (std::isnan(t)) return 0.5;
    return std::clamp(t, 0.0, 1.0);
}

int shade_level(double position, int levels) {
    if (position <= 0.0) return 0;
    const int level = static_cast<int>(std::ceil(std::min(position, 1.0) * (levels - 1)));
    return std::clamp(level, 1, levels - 1);
}

}  // namespace attn
