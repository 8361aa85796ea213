import ArgumentParser
import AuthmockScenario
import Foundation

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check scenario files without running them (file:line:column for every problem).")

    @Argument(help: "Scenario files or directories (default: scenarios/).") var paths: [String] = []

    func run() throws {
        var bad = 0
        var count = 0
        do {
            for file in try ScenarioLoader.files(in: paths.isEmpty ? ["scenarios"] : paths) {
                count += 1
                let problems = ScenarioLoader.problems(file: file)
                if problems.isEmpty, let scenario = try? ScenarioLoader.load(file: file) {
                    print("ok      \(file)  \(scenario.id) \(scenario.name) [\(scenario.profiles.joined(separator: ", "))]")
                } else {
                    bad += 1
                    for problem in problems { print("invalid \(problem)") }
                }
            }
        } catch let error as ScenarioError {
            print("invalid \(error)")
            throw ExitCode(RunExit.usage)
        }
        print("\(count - bad) valid, \(bad) invalid")
        if bad > 0 { throw ExitCode(RunExit.usage) }
    }
}
