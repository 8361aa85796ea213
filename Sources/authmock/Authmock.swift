import ArgumentParser
import AuthmockCore
import Foundation

@main
struct AuthmockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authmock",
        abstract: "A mock OAuth server and a conformance suite for token-refresh clients.",
        version: AuthmockVersion.current,
        subcommands: [
            ServeCommand.self, ProxyCommand.self, CtlCommand.self, RunCommand.self, ValidateCommand.self, InitCommand.self, MatrixCommand.self,
            CasesCommand.self,
            SchemaCommand.self, ErrorsCommand.self,
            SettingsCommand.self, GraphQLSchemaCommand.self, ReportCommand.self, DialectsCommand.self,
        ]
    )

    /// As ArgumentParser's own main, except that bad usage (a missing or
    /// unknown option, a value it cannot parse) exits 2, as documented and
    /// as CI scripts expect, not sysexits' 64.
    static func main() async {
        // The subcommand that was parsed: a usage error found while it runs
        // shows its own usage, not the top-level one.
        var parsed: (any ParsableCommand.Type)? = nil
        do {
            var command = try parseAsRoot()
            parsed = type(of: command)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                var message = fullMessage(for: error)
                if let parsed, parsed != AuthmockCommand.self {
                    let name = "authmock " + (parsed.configuration.commandName ?? "")
                    message = "Error: \(error)\nUsage: \(usageString(for: parsed))\n  See '\(name) --help' for more information."
                }
                FileHandle.standardError.write(Data((message + "\n").utf8))
                Foundation.exit(RunExit.usage)
            }
            exit(withError: error)
        }
    }
}

/// Prints a line and flushes it at once, into a pipe too (CI logs, `| tee`):
/// stdout to a pipe is block-buffered, so a run's progress would otherwise
/// arrive in 4 KB bursts, the first after many seconds. (`fflush(nil)`
/// flushes every stream without naming the C global `stdout`.)
func printNow(_ line: String) {
    print(line)
    fflush(nil)
}
