import ArgumentParser
import AuthmockScenario
import DriverProtocol

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema of scenario files (the source of docs/scenario.schema.json).")

    @Flag(help: "Print the table of expectation kinds instead (docs/scenarios.md#expectations).") var expectations = false

    @Flag(help: "Print the JSON Schema of the driver protocol's messages instead (docs/driver-protocol.schema.json).")
    var driverProtocol = false

    func validate() throws {
        if expectations && driverProtocol { throw ValidationError("--expectations and --driver-protocol print different things: give one") }
    }

    func run() {
        let text = expectations ? ExpectationKinds.markdownTable() : driverProtocol ? ProtocolSchema.jsonSchema() : ScenarioFormat.jsonSchema()
        print(text, terminator: "")
    }
}
