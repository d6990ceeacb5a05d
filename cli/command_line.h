// Command-line parsing shared by the subcommands: Boost.Program_options with one optional positional argument,
// --help, and usage errors that point at --help. Stateless: thread-safe.
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace omnilearn::cli {

// Parses `args` of `omnilearn <command>` into `vm`. `positional` names the option that takes the first bare word
// ("" for none); with `required`, its absence is a usage error. Returns the exit code to return at once (0 after
// printing --help, 2 on a usage error, already reported on stderr), or nullopt to go on.
inline std::optional<int> parse_command_line(const std::string& command, const std::vector<std::string>& args,
                                             const boost::program_options::options_description& options,
                                             const std::string& positional, bool required,
                                             boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::positional_options_description pos;
  if (!positional.empty()) pos.add(positional.c_str(), 1);
  try {
    po::store(po::command_line_parser(args).options(options).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "omnilearn " << command << ": " << e.what() << " (see omnilearn " << command << " --help)\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  if (required && !positional.empty() && !vm.count(positional)) {
    std::string upper = positional;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::cerr << "omnilearn " << command << ": missing " << upper << " (see omnilearn " << command << " --help)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace omnilearn::cli
