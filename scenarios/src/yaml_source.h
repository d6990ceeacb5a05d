// YamlSource: the one adapter over yaml-cpp. Loads YAML text into a tree (exceptions stop here), applies
// `key=value` overrides to the tree, and formats errors as "<file>:<line>: <field>: <what>".
// Private to scenarios/. Plain values: one thread at a time.
#pragma once

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::scenarios::detail {

class YamlSource {
 public:
  explicit YamlSource(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  // Parses `text`; a syntax error names the file and line. The tree is then checked (check_tree).
  Result<YAML::Node> load(std::string_view text) const;

  // Checks a loaded tree, so that no parser sees hostile text: nesting at most limits::kMaxYamlDepth, at most
  // limits::kMaxYamlNodes nodes with aliases expanded, keys that are plain scalars, and every scalar UTF-8
  // without control characters. An error names the file, line and field (`field` is the tree's own path).
  Status check_tree(const YAML::Node& node, const std::string& field) const;

  // Applies one `path.to.key=value` override (value parsed as YAML; `~` or `null` removes the key). Missing
  // maps on the way are created; `[i]` indexes an existing sequence. Remembers the override so that errors
  // about the values it set name it.
  Status apply_override(YAML::Node& root, std::string_view override_text);

  // "<name>:<line>: <field>: <what>", where the line is the node's; for a node set by an override,
  // "<name> (--set <override>): <field>: <what>".
  Status error(const YAML::Node& node, std::string_view field, std::string_view what) const;

 private:
  std::string location(const YAML::Node& node, std::string_view field) const;

  std::string name_;
  std::vector<std::pair<std::string, std::string>> overrides_;  // (path, override text)
};

// Runs `parse` at the adapter boundary: yaml-cpp's node access can throw (a subscript of a scalar, a conversion);
// such an exception becomes a parse error naming `source_name` and the line.
template <typename Parse>
auto parse_guarded(const std::string& source_name, Parse parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const YAML::Exception& e) {
    return Status::parse_error(source_name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

// A short description of a node for "got ..." in messages: "\"-3\"", "a mapping", "a sequence", "nothing".
std::string describe(const YAML::Node& node);

// Reads a whole file; an error naming the path if it cannot be read.
Result<std::string> read_text_file(const std::string& path);

}  // namespace omnilearn::scenarios::detail
