import AuthmockFileFormat
import AuthmockDialect
import ArgumentParser
import AuthmockScenario
import AuthmockServer
import DriverProtocol
import Foundation

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check scenario and dialect files without running them (file:line:column for every problem).",
        discussion: """
            With dialects (--dialect FILE, or dialect files among the paths), each case is checked against \
            them too: a profile it names that none declares is a problem, and a fault rule that can never \
            fire on a dialect it runs on (a path it does not serve, a sign-out it does not have) a warning.
            """)

    @Argument(help: "Case files, dialect files or directories (default: the built-in suite).") var paths: [String] = []

    @Option(name: .customLong("dialect"), help: "A dialect file to check the cases against (repeatable).")
    var dialectFiles: [String] = []

    func run() throws {
        var bad = 0
        var count = 0
        if paths.isEmpty && dialectFiles.isEmpty {
            let scenarios = try BuiltinSuite.scenarios()
            for scenario in scenarios {
                print("ok      \(scenario.file)  \(scenario.id) \(scenario.name) [\(scenario.profiles.joined(separator: ", "))]")
            }
            print("\(scenarios.count) valid, 0 invalid (the built-in suite \(BuiltinSuite.version))")
            return
        }
        var dialects: [String: LoadedDialect] = [:]
        var scenarios: [Scenario] = []
        do {
            let files = try ScenarioLoader.files(in: paths)
            // Dialects first: the cases are checked against them.
            for argument in dialectFiles + files {
                let given = dialectFiles.contains(argument)
                let text: String, file: String, builtin: Bool
                switch DialectLoader.text(fileOrBuiltin: argument) {
                case .success(let found): (text, file, builtin) = found
                case .failure(let error):
                    // A --dialect that names no file and no built-in dialect is a problem, not nothing to check.
                    guard given else { continue }
                    count += 1
                    bad += 1
                    print("invalid \(error)")
                    continue
                }
                guard DialectLoader.isDialect(text) else {
                    if given {
                        count += 1
                        bad += 1
                        print("invalid \(file):1:1: --dialect names a file that is no dialect file (it has no top-level `dialect:`)")
                    }
                    continue
                }
                count += 1
                let problems = builtin ? [] : DialectLoader.problems(text, file: file)
                if problems.isEmpty, let dialect = try? DialectLoader.parse(text, file: file, builtin: builtin) {
                    print("ok      \(file)  dialect \(dialect.description.name)")
                    dialects[dialect.description.name] = dialect
                } else {
                    bad += 1
                    for problem in problems { print("invalid \(problem)") }
                }
            }
            for file in files {
                if let text = try? String(contentsOfFile: file, encoding: .utf8), DialectLoader.isDialect(text) { continue }
                count += 1
                let problems = ScenarioLoader.problems(file: file)
                guard problems.isEmpty, let scenario = try? ScenarioLoader.load(file: file) else {
                    bad += 1
                    for problem in problems { print("invalid \(problem)") }
                    continue
                }
                scenarios.append(scenario)
            }
        } catch let error as ScenarioError {
            print("invalid \(error)")
            throw ExitCode(RunExit.usage)
        }
        for scenario in scenarios {
            let undeclared = dialects.isEmpty ? [] : scenario.profiles.filter { !Dialects.names.contains($0) && dialects[$0] == nil }
            if !undeclared.isEmpty {
                bad += 1
                print(
                    "invalid \(scenario.file): dialect \(undeclared.map { "'\($0)'" }.joined(separator: ", ")) is no built-in dialect and none of the given dialects (\(dialects.keys.sorted().joined(separator: ", "))); pass its file with --dialect"
                )
                continue
            }
            let declared = dialects.isEmpty ? [] : scenario.runs(onProfiles: [], dialects: dialects).filter { dialects[$0] != nil }
            let on = dialects.isEmpty ? scenario.profiles : declared
            print(
                "ok      \(scenario.file)  \(scenario.id) \(scenario.name) [\(on.isEmpty ? "runs on none of the given dialects" : on.joined(separator: ", "))]"
            )
            for warning in scenario.warnings { print("warning \(warning)") }
            for name in declared {
                guard let dialect = dialects[name] else { continue }
                for warning in scenario.warnings(on: dialect.description) { print("warning \(warning)") }
            }
        }
        print("\(count - bad) valid, \(bad) invalid")
        if bad > 0 { throw ExitCode(RunExit.usage) }
    }
}
