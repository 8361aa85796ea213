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
            ServeCommand.self, CtlCommand.self, RunCommand.self, ValidateCommand.self, InitCommand.self, MatrixCommand.self, CasesCommand.self, SchemaCommand.self, ErrorsCommand.self,
            SettingsCommand.self, GraphQLSchemaCommand.self, ReportCommand.self,
        ]
    )

    /// As ArgumentParser's own main, except that bad usage (a missing or
    /// unknown option, a value it cannot parse) exits 2, as documented and
    /// as CI scripts expect, not sysexits' 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(RunExit.usage)
            }
            exit(withError: error)
        }
    }
}
