import ArgumentParser
import AuthmockCore
import AuthmockServer

struct ErrorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "errors",
        abstract: "Print every documented error as Markdown (the source of docs/errors.md).",
        discussion: "With --profile, print only the table a client of that profile can meet (embedded in docs/profiles/NAME.md)."
    )

    @Option(help: "Only the errors of this profile, plus the shared ones, as a bare table.") var profile: String?

    func run() throws {
        guard let profile else {
            print(ErrorTable.markdown(), terminator: "")
            return
        }
        guard let rows = ErrorTable.rows(forDialect: profile) else {
            throw ValidationError("unknown profile '\(profile)'")
        }
        print(ErrorTable.table(rows), terminator: "")
    }
}
