import ArgumentParser
import AuthmockScenario

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema of scenario files (the source of docs/scenario.schema.json).")

    @Flag(help: "Print the table of expectation kinds instead (docs/scenarios.md#expectations).") var expectations = false

    func run() {
        print(expectations ? ExpectationKinds.markdownTable() : ScenarioFormat.jsonSchema(), terminator: "")
    }
}
