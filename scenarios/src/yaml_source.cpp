#include "yaml_source.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/base/text_checks.h"

namespace omnilearn::scenarios::detail {
namespace {

// A copy of `node` without source marks, so that errors about override values name the override.
YAML::Node unmarked_copy(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return YAML::Node(node.Scalar());
    case YAML::NodeType::Sequence: {
      YAML::Node out(YAML::NodeType::Sequence);
      for (const auto& child : node) out.push_back(unmarked_copy(child));
      return out;
    }
    case YAML::NodeType::Map: {
      YAML::Node out(YAML::NodeType::Map);
      for (auto it = node.begin(); it != node.end(); ++it) out[it->first.Scalar()] = unmarked_copy(it->second);
      return out;
    }
    default:
      return YAML::Node(YAML::NodeType::Null);
  }
}

struct PathToken {
  std::string key;            // empty for a pure index token
  std::vector<std::size_t> indexes;
};

// Splits "a.b[2].c" into tokens; false if malformed.
bool split_path(std::string_view path, std::vector<PathToken>& out) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t dot = path.find('.', start);
    std::string_view part = path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    PathToken token;
    std::size_t bracket = part.find('[');
    token.key = std::string(part.substr(0, bracket));
    if (token.key.empty()) return false;
    while (bracket != std::string_view::npos) {
      std::size_t close = part.find(']', bracket);
      if (close == std::string_view::npos) return false;
      std::string_view digits = part.substr(bracket + 1, close - bracket - 1);
      std::size_t index = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) return false;
      token.indexes.push_back(index);
      bracket = close + 1 == part.size() ? std::string_view::npos : close + 1;
      if (bracket != std::string_view::npos && part[bracket] != '[') return false;
    }
    out.push_back(std::move(token));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return !out.empty();
}

// "<what> (byte N)" when `text` is not UTF-8 or holds a control character, else "".
std::string text_problem(const std::string& text) {
  if (const std::size_t at = invalid_utf8_offset(text); at != std::string::npos) {
    return "expected UTF-8 text, got a byte that is not (byte " + std::to_string(at + 1) + " of the value)";
  }
  if (const std::size_t at = control_char_offset(text); at != std::string::npos) {
    return "expected text without control characters (newline, tab, NUL, ...), got one at byte " +
           std::to_string(at + 1) + " of the value";
  }
  return "";
}

// A message for yaml-cpp's exceptions; its depth guard says only "bad file".
std::string yaml_error_text(const YAML::Exception& e) {
  if (dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr) {
    return "nesting is too deep (expected at most " + std::to_string(limits::kMaxYamlDepth) +
           " levels of mappings and sequences)";
  }
  return e.msg;
}

}  // namespace

Status YamlSource::check_tree(const YAML::Node& root, const std::string& root_field) const {
  struct Item {
    YAML::Node node;
    std::string field;
    int depth;
  };
  std::vector<Item> stack{{root, root_field, 0}};
  std::size_t visited = 0;
  while (!stack.empty()) {
    Item item = std::move(stack.back());
    stack.pop_back();
    const std::string shown = item.field.empty() ? std::string("(top level)") : item.field;
    if (++visited > limits::kMaxYamlNodes) {
      return error(item.node, shown,
                   "the document has more than " + std::to_string(limits::kMaxYamlNodes) +
                       " nodes once its aliases are expanded (expected at most that many)");
    }
    if (item.depth > limits::kMaxYamlDepth) {
      return error(item.node, shown,
                   "nesting is too deep (expected at most " + std::to_string(limits::kMaxYamlDepth) +
                       " levels of mappings and sequences)");
    }
    const YAML::Node& n = item.node;
    if (n.IsScalar()) {
      if (std::string bad = text_problem(n.Scalar()); !bad.empty()) return error(n, shown, bad);
    } else if (n.IsSequence()) {
      for (std::size_t i = n.size(); i-- > 0;) {
        stack.push_back({n[i], item.field + "[" + std::to_string(i) + "]", item.depth + 1});
      }
    } else if (n.IsMap()) {
      std::vector<Item> children;
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (!it->first.IsScalar()) return error(it->first, shown, "expected plain keys, got " + describe(it->first));
        const std::string key = it->first.Scalar();
        const std::string child = item.field.empty() ? key : item.field + "." + key;
        if (std::string bad = text_problem(key); !bad.empty()) return error(it->first, shown, "key: " + bad);
        children.push_back({it->second, child, item.depth + 1});
      }
      stack.insert(stack.end(), std::make_move_iterator(children.rbegin()), std::make_move_iterator(children.rend()));
    }
  }
  return Status::ok();
}

Result<YAML::Node> YamlSource::load(std::string_view text) const {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsDefined() || root.IsNull()) return YAML::Node(YAML::NodeType::Map);
    OMNI_RETURN_IF_ERROR(check_tree(root, ""));
    return root;
  } catch (const YAML::Exception& e) {
    return Status::parse_error(name_ + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " +
                               yaml_error_text(e));
  }
}

Status YamlSource::apply_override(YAML::Node& root, std::string_view override_text) {
  const std::string text(override_text);
  const std::size_t eq = text.find('=');
  const std::string where = name_ + " (--set " + text + ")";
  if (eq == std::string::npos || eq == 0) {
    return Status::invalid_argument(where + ": expected path.to.key=value");
  }
  const std::string path = text.substr(0, eq);
  std::vector<PathToken> tokens;
  if (!split_path(path, tokens)) {
    return Status::invalid_argument(where + ": malformed key path '" + path + "' (expected a.b[2].c)");
  }
  if (!root.IsMap()) return Status::invalid_argument(where + ": the document is not a mapping");
  overrides_.emplace_back(path, text);
  YAML::Node value;
  try {
    const YAML::Node parsed = YAML::Load(text.substr(eq + 1));
    // Checked before copying (an alias bomb is never expanded); its nodes are marked, so name the override.
    if (Status st = check_tree(parsed, path); !st.is_ok()) {
      return Status::invalid_argument(where + ": " + st.message().substr(st.message().find(": ", name_.size()) + 2));
    }
    value = unmarked_copy(parsed);
  } catch (const YAML::Exception& e) {
    return Status::parse_error(where + ": value is not valid YAML: " + yaml_error_text(e));
  }
  // Walk down, creating maps for missing keys; `reset` re-points a handle without touching the tree.
  YAML::Node cur;
  cur.reset(root);
  std::string walked;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const PathToken& token = tokens[t];
    const bool last_token = t + 1 == tokens.size();
    if (cur.IsNull()) cur = YAML::Node(YAML::NodeType::Map);  // cur is a tree slot here: assigning fills it
    if (!cur.IsMap()) {
      return Status::invalid_argument(where + ": " + walked + ": cannot set a key inside " + describe(cur));
    }
    walked += (walked.empty() ? "" : ".") + token.key;
    const YAML::Node& read_only = cur;  // const operator[] never inserts
    const bool exists = read_only[token.key].IsDefined();
    if (last_token && token.indexes.empty()) {
      if (value.IsNull()) {
        if (!exists) return Status::invalid_argument(where + ": " + walked + ": nothing to remove");
        cur.remove(token.key);
      } else {
        cur[token.key] = value;
      }
      break;
    }
    if (!exists) {
      if (!token.indexes.empty()) return Status::invalid_argument(where + ": " + walked + ": no such sequence");
      cur[token.key] = YAML::Node(YAML::NodeType::Map);
    }
    YAML::Node next;
    next.reset(cur[token.key]);
    for (std::size_t i = 0; i < token.indexes.size(); ++i) {
      const std::size_t index = token.indexes[i];
      walked += "[" + std::to_string(index) + "]";
      if (!next.IsSequence() || index >= next.size()) {
        return Status::invalid_argument(where + ": " + walked + ": index out of range or not a sequence");
      }
      if (last_token && i + 1 == token.indexes.size()) {
        if (value.IsNull()) return Status::invalid_argument(where + ": " + walked + ": cannot remove a sequence item");
        next[index] = value;
        return Status::ok();
      }
      YAML::Node item;
      item.reset(next[index]);
      next.reset(item);
    }
    cur.reset(next);
  }
  return Status::ok();
}

std::string YamlSource::location(const YAML::Node& node, std::string_view field) const {
  if (node.IsDefined() && !node.Mark().is_null()) return name_ + ":" + std::to_string(node.Mark().line + 1);
  // The node was set by an override: name the latest override on this field or one of its parents.
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
    // The override set this field, a parent of it, or (creating maps on its way) a child of it.
    const std::string_view p = it->first;
    const std::string_view shorter = p.size() < field.size() ? p : field;
    const std::string_view longer = p.size() < field.size() ? field : p;
    if (longer.substr(0, shorter.size()) == shorter &&
        (longer.size() == shorter.size() || longer[shorter.size()] == '.' || longer[shorter.size()] == '[')) {
      return name_ + " (--set " + it->second + ")";
    }
  }
  return name_;
}

Status YamlSource::error(const YAML::Node& node, std::string_view field, std::string_view what) const {
  return Status::invalid_argument(location(node, field) + ": " + std::string(field) + ": " + std::string(what));
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a sequence";
  return "\"" + node.Scalar() + "\"";
}

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found(path + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::io_error(path + ": read error");
  return text.str();
}

}  // namespace omnilearn::scenarios::detail
