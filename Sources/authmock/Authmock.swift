import ArgumentParser
import AuthmockCore

@main
struct AuthmockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authmock",
        abstract: "A mock OAuth server and a conformance suite for token-refresh clients.",
        version: AuthmockVersion.current,
        subcommands: [ServeCommand.self, ErrorsCommand.self]
    )
}

struct ErrorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "errors",
        abstract: "Print every documented error as Markdown (the source of docs/errors.md)."
    )

    func run() {
        print(ErrorTable.markdown(), terminator: "")
    }
}
