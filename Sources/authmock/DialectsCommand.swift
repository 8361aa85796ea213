import AuthmockDialect
import AuthmockFileFormat
import ArgumentParser
import AuthmockScenario
import AuthmockServer
import Foundation

struct DialectsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dialects",
        abstract: "List the built-in dialects, or print a dialect file to start yours from (docs/dialects.md).")

    @Argument(help: "A built-in dialect written as a file (\(BuiltinDialects.names.joined(separator: ", "))): print its file.") var name: String?
    @Flag(help: "Print the worked example of docs/dialects.md: a dialect file to copy and change.") var example = false
    @Flag(help: "Print the Markdown reference of every key, situation and placeholder.") var reference = false
    @Flag(help: "Print the JSON Schema of dialect files.") var schema = false
    @Option(help: "Print a dialect file as the server reads it: JSON, every default filled in, as a driver gets it in hello.") var json: String?
    /// scripts/regen-docs.sh compiles authmock's own files (which take built-in names) with this.
    @Flag(help: .hidden) var builtin = false
    /// With --json: the file's `settings` instead, as flags would give them (scripts/regen-docs.sh).
    @Flag(help: .hidden) var settings = false

    func run() throws {
        if let name {
            guard !example, !reference, !schema, json == nil else {
                throw ValidationError("give a dialect's name or one of --example, --reference, --schema, --json")
            }
            guard let file = BuiltinDialects.file(name) else {
                let inSwift = Dialects.names.contains(name) ? "'\(name)' is built in code, not as a file" : "no built-in dialect '\(name)'"
                throw ValidationError(
                    "\(inSwift); built in as files: \(BuiltinDialects.names.joined(separator: ", ")) (or start from `authmock dialects --example`)")
            }
            print(file, terminator: "")
            return
        }
        if let json {
            guard !example, !reference, !schema else { throw ValidationError("give at most one of --example, --reference, --schema, --json") }
            let text: String
            do { text = try String(contentsOfFile: json, encoding: .utf8) } catch {
                throw ValidationError("\(json): cannot be read: \(error.localizedDescription)")
            }
            let loaded = try DialectLoader.parse(text, file: json, builtin: builtin)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            let encoded = settings ? try encoder.encode(loaded.settings.values.mapValues(\.text)) : try encoder.encode(loaded.description)
            print(String(decoding: encoded, as: UTF8.self))
            return
        }
        switch (example, reference, schema) {
        case (true, false, false): print(DialectFormat.example, terminator: "")
        case (false, true, false): print(DialectFormat.referenceMarkdown(), terminator: "")
        case (false, false, true): print(DialectFormat.jsonSchema(), terminator: "")
        case (false, false, false):
            for name in Dialects.names {
                guard let profile = Dialects.make(name, options: DialectOptions()) else { continue }
                print("\(name.padding(toLength: 16, withPad: " ", startingAt: 0))\(profile.summary)")
            }
            print("\nServe one with `authmock serve --dialect NAME`; `authmock dialects NAME` prints the file of")
            print("\(BuiltinDialects.names.joined(separator: ", ")) to start from. Describe your own backend in a file")
            print("(`authmock dialects --example > mine.yaml`), check it with `authmock validate mine.yaml`,")
            print("and serve it with `authmock serve --dialect mine.yaml` (docs/dialects.md).")
        default: throw ValidationError("give at most one of --example, --reference, --schema")
        }
    }
}
