#include "platform_hosts.h"

#include <algorithm>
#include <cstddef>
#include <set>
#include <utility>

#include "omnilearn/scenarios/quantity_parser.h"
#include "yaml_source.h"

namespace omnilearn::scenarios::detail {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The predefined entities and numeric character references below 128 (host ids are names, not text).
std::string decode_entities(std::string_view s) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool replaced = false;
    if (s[i] == '&') {
      for (const auto& [name, c] : kEntities) {
        if (s.substr(i, name.size()) == name) {
          out += c;
          i += name.size() - 1;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += s[i];
  }
  return out;
}

using Attributes = std::vector<std::pair<std::string, std::string>>;

// The attributes of a start tag's text after its name; false when malformed.
bool parse_attributes(std::string_view text, Attributes& out) {
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size() || text[i] == '/') return true;
    const std::size_t name_start = i;
    while (i < text.size() && !is_space(text[i]) && text[i] != '=') ++i;
    const std::string name(text.substr(name_start, i - name_start));
    while (i < text.size() && is_space(text[i])) ++i;
    if (name.empty() || i == text.size() || text[i] != '=') return false;
    ++i;
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size() || (text[i] != '"' && text[i] != '\'')) return false;
    const char quote = text[i++];
    const std::size_t end = text.find(quote, i);
    if (end == std::string_view::npos) return false;
    out.emplace_back(name, decode_entities(text.substr(i, end - i)));
    i = end + 1;
  }
}

const std::string* find_attribute(const Attributes& attributes, std::string_view name) {
  for (const auto& [key, value] : attributes) {
    if (key == name) return &value;
  }
  return nullptr;
}

// A <host>'s speed: the `pstate`-th of its comma-separated speeds (SimGrid's initial power state), else the first.
Result<double> host_speed(const Attributes& attributes, const std::string& where) {
  const std::string* speed = find_attribute(attributes, "speed");
  if (speed == nullptr) return Status::invalid_argument(where + ": no `speed`");
  std::vector<std::string_view> speeds;
  std::string_view rest = *speed;
  for (std::size_t comma; (comma = rest.find(',')) != std::string_view::npos; rest.remove_prefix(comma + 1)) {
    speeds.push_back(rest.substr(0, comma));
  }
  speeds.push_back(rest);
  std::size_t pstate = 0;
  if (const std::string* p = find_attribute(attributes, "pstate"); p != nullptr) {
    const std::optional<double> n = parse_number(*p);
    if (!n || *n < 0.0 || *n != static_cast<double>(static_cast<std::size_t>(*n)) ||
        static_cast<std::size_t>(*n) >= speeds.size()) {
      return Status::invalid_argument(where + ": pstate '" + *p + "' is not one of its " +
                                      std::to_string(speeds.size()) + " speeds");
    }
    pstate = static_cast<std::size_t>(*n);
  }
  const std::optional<double> flops = parse_speed_flops(speeds[pstate]);
  if (!flops) {
    return Status::invalid_argument(where + ": speed '" + std::string(speeds[pstate]) +
                                    "' is not a speed (a number with f or flops and a prefix: 1.5Gf)");
  }
  return *flops;
}

}  // namespace

Result<std::vector<PlatformHost>> parse_platform_hosts(std::string_view xml, const std::string& path) {
  std::vector<PlatformHost> hosts;
  std::set<std::string> names;
  int line = 1;
  std::size_t counted = 0;  // `line` is the line of xml[counted]
  auto line_at = [&](std::size_t pos) {
    line += static_cast<int>(std::count(xml.begin() + static_cast<std::ptrdiff_t>(counted),
                                        xml.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    counted = pos;
    return line;
  };
  auto error = [&](std::size_t pos, const std::string& what) {
    return Status::invalid_argument("'" + path + "' line " + std::to_string(line_at(pos)) + ": " + what);
  };
  for (std::size_t pos = xml.find('<'); pos != std::string_view::npos; pos = xml.find('<', pos)) {
    const std::string_view at = xml.substr(pos);
    // Comments, processing instructions, the DOCTYPE and end tags hold no hosts.
    std::string_view close = ">";
    if (at.starts_with("<!--")) {
      close = "-->";
    } else if (at.starts_with("<?")) {
      close = "?>";
    }
    if (close != ">" || at.starts_with("<!") || at.starts_with("</")) {
      const std::size_t end = xml.find(close, pos + 2);
      if (end == std::string_view::npos) return error(pos, "unterminated '" + std::string(at.substr(0, 4)) + "'");
      pos = end + close.size();
      continue;
    }
    // A start tag ends at the first '>' outside quotes.
    std::size_t end = pos + 1;
    for (char quote = 0; end < xml.size() && (quote != 0 || xml[end] != '>'); ++end) {
      if (quote == 0 && (xml[end] == '"' || xml[end] == '\'')) {
        quote = xml[end];
      } else if (xml[end] == quote) {
        quote = 0;
      }
    }
    if (end == xml.size()) return error(pos, "unterminated tag");
    const std::string_view tag = xml.substr(pos + 1, end - pos - 1);
    std::size_t name_end = 0;
    while (name_end < tag.size() && !is_space(tag[name_end]) && tag[name_end] != '/') ++name_end;
    const std::string_view element = tag.substr(0, name_end);
    if (element == "cluster" || element == "cabinet" || element == "peer" || element == "include") {
      return error(pos, "<" + std::string(element) +
                            "> makes hosts that are not read here: list the workers under `nodes` (with `hosts`)");
    }
    if (element == "host") {
      Attributes attributes;
      if (!parse_attributes(tag.substr(name_end), attributes)) return error(pos, "malformed <host> attributes");
      const std::string* id = find_attribute(attributes, "id");
      if (id == nullptr || id->empty()) return error(pos, "<host> without an id");
      const std::string where = "host '" + *id + "'";
      auto speed = host_speed(attributes, where);
      if (!speed) return error(pos, speed.status().message());
      if (!names.insert(*id).second) return error(pos, where + " is defined twice");
      hosts.push_back({*id, *speed, line_at(pos)});
    }
    pos = end + 1;
  }
  return hosts;
}

Result<std::vector<PlatformHost>> read_platform_hosts(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.status();
  return parse_platform_hosts(*text, path);
}

}  // namespace omnilearn::scenarios::detail
