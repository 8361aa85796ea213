import ArgumentParser
import AuthmockScenario
import AuthmockServer
import Foundation

struct DialectsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dialects",
        abstract: "List the built-in dialects, or print a dialect file to start yours from (docs/dialects.md).")

    @Flag(help: "Print the worked example of docs/dialects.md: a dialect file to copy and change.") var example = false
    @Flag(help: "Print the Markdown reference of every key, situation and placeholder.") var reference = false
    @Flag(help: "Print the JSON Schema of dialect files.") var schema = false

    func run() throws {
        switch (example, reference, schema) {
        case (true, false, false): print(DialectFormat.example, terminator: "")
        case (false, true, false): print(DialectFormat.referenceMarkdown(), terminator: "")
        case (false, false, true): print(DialectFormat.jsonSchema(), terminator: "")
        case (false, false, false):
            for name in Profiles.names {
                guard let profile = Profiles.make(name, options: ProfileOptions()) else { continue }
                print("\(name.padding(toLength: 16, withPad: " ", startingAt: 0))\(profile.summary)")
            }
            print("\nServe one with `authmock serve --profile NAME`. Describe your own backend in a file")
            print("(`authmock dialects --example > mine.yaml`), check it with `authmock validate mine.yaml`,")
            print("and serve it with `authmock serve --dialect mine.yaml` (docs/dialects.md).")
        default: throw ValidationError("give at most one of --example, --reference, --schema")
        }
    }
}
