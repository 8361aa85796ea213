import ArgumentParser
import AuthmockScenario

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema of scenario files (the source of docs/scenario.schema.json).")

    func run() {
        print(ScenarioFormat.jsonSchema(), terminator: "")
    }
}
