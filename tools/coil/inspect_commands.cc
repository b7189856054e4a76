// `coil inspect SOURCE [--port N] [--export FILE.html]`: the browser inspector's server and
// exporter (docs/inspector.md). SOURCE is a folder of .pb files or one .pb file.
#include "tools/coil/inspect_commands.h"

#include <csignal>
#include <cstdio>
#include <iostream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/io/read_file.h"
#include "ir/io/write_file.h"
#include "tools/coil/args.h"
#include "tools/coil/inspect_export.h"
#include "tools/coil/inspect_server.h"
#include "tools/coil/inspect_site.h"
#include "tools/coil/inspect_weights.h"
#include "tools/coil/page_embed.h"

namespace coil::cli {
namespace {

constexpr char kUsage[] =
    "usage: coil inspect SOURCE [--port N] [--export FILE.html [--with-weights]]\n"
    "                           [--page PAGE.html]\n"
    "  Opens compile artifacts in the browser inspector. SOURCE is a folder of .pb files\n"
    "  (report.pb and per-stage files, as `coil compile MODEL --dump DIR` writes) or one .pb\n"
    "  file. Serves the inspector on http://127.0.0.1:PORT/ until interrupted (only this\n"
    "  machine can connect) and prints that URL on stdout.\n"
    "  --port N            port to listen on (default 8080; 0 picks a free port)\n"
    "  --export FILE.html  write one self-contained HTML file with the report embedded and exit\n"
    "                      (the folder's report.pb, or else its first .pb file); a report's\n"
    "                      weights (constants of 64 bytes or more) are left out, their types\n"
    "                      and sizes kept\n"
    "  --with-weights      embed the weights too\n"
    "  --page PAGE.html    use this page instead of the one built into coil (page development)\n";

int Fail(absl::string_view message) {
  std::cerr << "coil inspect: " << message << "\n";
  return 1;
}

int Export(const InspectSite& site, const std::string& out_path, bool with_weights) {
  absl::StatusOr<InspectSite::Listing> listing = site.List();
  if (!listing.ok()) return Fail(listing.status().message());
  const std::string& name = listing->files.front();  // Open() guarantees one
  absl::StatusOr<std::string> bytes = site.ReadListedFile(name);
  if (!bytes.ok()) return Fail(bytes.status().message());
  // Weights are most of a report (every constant, stored once) and no part of what the page
  // shows but their sizes: left out unless asked for. Only a report.pb is known to be a
  // CompileReport; other single files go in as they are.
  if (!with_weights && name == "report.pb") {
    WeightsDropped dropped;
    absl::StatusOr<std::string> light = DropReportWeights(*bytes, &dropped);
    if (light.ok()) {
      std::cerr << "coil inspect: left out the weights (" << dropped.constants << " constants, "
                << dropped.bytes << " bytes; --with-weights keeps them)\n";
      bytes = *std::move(light);
    } else {
      // Embedded as it is: the page names what is wrong with it.
      std::cerr << "coil inspect: " << name << " does not parse as a CompileReport; embedded "
                << "as it is\n";
    }
  }
  absl::StatusOr<std::string> html = EmbedReport(site.page(), name, *bytes);
  if (!html.ok()) return Fail(html.status().message());
  // No fixed FILE.tmp, no following a link, no replacing a device node (ir/io/write_file.h).
  if (absl::Status s = WriteFileAtomically(out_path, *html); !s.ok()) return Fail(s.message());
  std::cerr << "coil inspect: wrote " << out_path << " (" << html->size() << " bytes): the page + "
            << name << " (" << bytes->size() << " bytes)\n";
  if (listing->files.size() > 1) {
    std::cerr << "coil inspect: " << listing->files.size() - 1 << " other .pb file(s) in "
              << site.folder() << " are not embedded"
              << (name == "report.pb" ? " (report.pb holds every stage)" : "")
              << "; export one with coil inspect " << site.folder() << "/NAME.pb --export FILE\n";
  }
  return 0;
}

int Serve(const InspectSite& site, int port) {
  HttpServer::Options options;
  options.port = port;
  options.log = [](const std::string& line) { std::cerr << "coil inspect: " << line << "\n"; };
  absl::StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Listen(
      options, [&site](const http::Request& request) { return site.Handle(request); });
  if (!server.ok()) return Fail(server.status().message());
  absl::StatusOr<InspectSite::Listing> listing = site.List();
  if (!listing.ok()) return Fail(listing.status().message());
  std::cerr << "coil inspect: serving " << listing->files.size() << " file(s) from "
            << site.folder() << " (" << listing->files.front()
            << (listing->files.size() > 1 ? ", ..." : "") << "); Ctrl-C stops\n";
  for (const std::string& skipped : listing->skipped) {
    std::cerr << "coil inspect: not serving '" << skipped
              << "': its name has characters a URL cannot carry safely\n";
  }
  // A reader that closes our stdout after the URL (a test harness) must not kill the server;
  // sockets already send with MSG_NOSIGNAL.
  std::signal(SIGPIPE, SIG_IGN);
  std::printf("http://127.0.0.1:%d/\n", (*server)->port());
  std::fflush(stdout);
  (*server)->Serve();
  return 0;
}

}  // namespace

int InspectCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args = ParseArgs(argv, {"port", "export", "page"}, {"help", "with-weights"});
  if (!args.ok()) {
    std::cerr << "coil inspect: " << args.status().message() << "\n" << kUsage;
    return 2;
  }
  if (args->Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (args->positional.size() != 1) {
    std::cerr << "coil inspect: expected one SOURCE (a folder or a .pb file), got "
              << args->positional.size() << "\n" << kUsage;
    return 2;
  }
  int port = 8080;
  if (args->values.count("port")) {
    if (args->values.count("export")) {
      std::cerr << "coil inspect: --export writes a file and exits; it takes no --port\n";
      return 2;
    }
    if (!absl::SimpleAtoi(args->Get("port"), &port) || port < 0 || port > 65535) {
      std::cerr << "coil inspect: --port must be an integer in 0..65535 (0 picks a free port), "
                   "got '" << args->Get("port") << "'\n";
      return 2;
    }
  }
  std::string page(InspectorPage());
  if (args->values.count("page")) {
    absl::StatusOr<std::string> custom = ReadInputFile(args->Get("page"));
    if (!custom.ok()) return Fail(absl::StrCat("--page: ", custom.status().message()));
    page = *std::move(custom);
  }
  absl::StatusOr<InspectSite> site = InspectSite::Open(args->positional[0], std::move(page));
  if (!site.ok()) return Fail(site.status().message());
  if (args->Has("with-weights") && !args->values.count("export")) {
    std::cerr << "coil inspect: --with-weights goes with --export\n";
    return 2;
  }
  if (args->values.count("export")) {
    return Export(*site, args->Get("export"), args->Has("with-weights"));
  }
  return Serve(*site, port);
}

}  // namespace coil::cli
