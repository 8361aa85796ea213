import ArgumentParser
import AuthmockScenario
import Foundation

struct CasesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cases",
        abstract: "Print the table of built-in cases (the source of docs/cases.md).")

    @Option(help: "Scenario directory.") var scenarios = "scenarios"
    @Option(help: "Teeth matrix (default: SCENARIOS/_teeth.yaml).") var matrix: String?

    func run() throws {
        let loaded = try ScenarioLoader.files(in: [scenarios]).map { try ScenarioLoader.load(file: $0) }
        let teeth = try TeethMatrix.load(path: matrix ?? (scenarios as NSString).appendingPathComponent("_teeth.yaml"))
        print(CasesPage.markdown(loaded, matrix: teeth), terminator: "")
    }
}
