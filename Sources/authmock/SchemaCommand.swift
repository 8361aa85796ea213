import ArgumentParser
import AuthmockModel
import AuthmockScenario
import DriverProtocol

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema of scenario files (the source of docs/scenario.schema.json).")

    @Flag(help: "Print the table of expectation kinds instead (docs/scenarios.md#expectations).") var expectations = false

    @Flag(help: "Print the JSON Schema of the driver protocol's messages instead (docs/driver-protocol.schema.json).")
    var driverProtocol = false

    @Flag(help: "Print the list of fault action types instead (docs/control-api.md#faults).") var faultActions = false

    func validate() throws {
        if [expectations, driverProtocol, faultActions].filter({ $0 }).count > 1 {
            throw ValidationError("--expectations, --driver-protocol and --fault-actions print different things: give one")
        }
    }

    func run() {
        let text =
            expectations
            ? ExpectationKinds.markdownTable()
            : driverProtocol ? ProtocolSchema.jsonSchema() : faultActions ? FaultRule.actionsMarkdown() : ScenarioFormat.jsonSchema()
        print(text, terminator: "")
    }
}
