import ArgumentParser
import AuthmockCore
import AuthmockServer

struct ErrorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "errors",
        abstract: "Print every documented error as Markdown (the source of docs/errors.md).",
        discussion: "With --dialect, print only the table a client of that dialect can meet (embedded in docs/dialects/NAME.md)."
    )

    @Option(help: "Only the errors of this built-in dialect, plus the shared ones, as a bare table.") var dialect: String?
    @Option(help: .hidden) var profile: String?

    func run() throws {
        guard let name = dialect ?? profile else {
            print(ErrorTable.markdown(), terminator: "")
            return
        }
        guard let rows = ErrorTable.rows(forDialect: name) else {
            throw ValidationError("unknown dialect '\(name)'\(Suggestion.hint(for: name, in: Dialects.names + ["graphql"]))")
        }
        print(ErrorTable.table(rows), terminator: "")
    }
}
