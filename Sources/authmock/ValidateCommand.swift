import ArgumentParser
import AuthmockScenario
import DriverProtocol
import Foundation

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check scenario and dialect files without running them (file:line:column for every problem).")

    @Argument(help: "Case files, dialect files or directories (default: the built-in suite).") var paths: [String] = []

    func run() throws {
        var bad = 0
        var count = 0
        if paths.isEmpty {
            let scenarios = try BuiltinSuite.scenarios()
            for scenario in scenarios {
                print("ok      \(scenario.file)  \(scenario.id) \(scenario.name) [\(scenario.profiles.joined(separator: ", "))]")
            }
            print("\(scenarios.count) valid, 0 invalid (the built-in suite \(BuiltinSuite.version))")
            return
        }
        do {
            for file in try ScenarioLoader.files(in: paths) {
                count += 1
                // A dialect file (docs/dialects.md) is checked as one; anything else as a case.
                if let text = try? String(contentsOfFile: file, encoding: .utf8), DialectLoader.isDialect(text) {
                    let problems = DialectLoader.problems(text, file: file)
                    if problems.isEmpty, let dialect = try? DialectLoader.parse(text, file: file) {
                        print("ok      \(file)  dialect \(dialect.description.name)")
                    } else {
                        bad += 1
                        for problem in problems { print("invalid \(problem)") }
                    }
                    continue
                }
                let problems = ScenarioLoader.problems(file: file)
                if problems.isEmpty, let scenario = try? ScenarioLoader.load(file: file) {
                    print("ok      \(file)  \(scenario.id) \(scenario.name) [\(scenario.profiles.joined(separator: ", "))]")
                    for warning in scenario.warnings { print("warning \(warning)") }
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
