import ArgumentParser
import AuthmockScenario
import Foundation

/// Exit statuses of `authmock run` and `authmock validate`.
enum RunExit {
    /// Nothing failed or errored.
    static let ok: Int32 = 0
    /// A case FAILed or ERRORed.
    static let failures: Int32 = 1
    /// Bad usage or an invalid scenario file.
    static let usage: Int32 = 2
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Replay scenarios against a client driver and judge what the client did.",
        discussion: """
            Each case gets a fresh in-process server and a fresh driver process. Exit status: 0 when nothing \
            FAILed or ERRORed, 1 otherwise, 2 for bad usage or invalid scenario files.
            """
    )

    @Argument(help: "Scenario files or directories (default: scenarios/).") var paths: [String] = []
    @Option(help: "Shell command that starts the driver, e.g. \"python3 drivers/python-authlib/driver.py\".") var driver: String
    @Option(name: .customLong("case"), help: "Only cases whose id matches this glob (e.g. 1.* or 2.1); repeatable.") var cases: [String] = []
    @Option(help: "Only these profiles; repeatable.") var profile: [String] = []
    @Option(help: "Only cases of this level: must or should.") var level: String?
    @Option(help: "Cases run at once (default: the number of cores).") var jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    @Option(name: .customLong("expected-failures"), help: "YAML file of cases the driver is known to fail, with reasons (reported as SKIP).") var expectedFailures: String?
    @Option(help: "Write a JUnit XML report here.") var junit: String?
    @Option(help: "Write a JSON report here.") var json: String?
    @Flag(help: "Print the evidence of passing cases too.") var verbose = false

    func run() async throws {
        let files: [String]
        var scenarios: [Scenario] = []
        do {
            files = try ScenarioLoader.files(in: paths.isEmpty ? ["scenarios"] : paths)
            for file in files { scenarios.append(try ScenarioLoader.load(file: file)) }
        } catch let error as ScenarioError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
        guard level == nil || level == "must" || level == "should" else { throw ValidationError("--level takes must or should") }
        var known: [String: String] = [:]
        if let expectedFailures {
            do {
                known = try ExpectedFailures.load(path: expectedFailures)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode(RunExit.usage)
            }
        }
        let selected = scenarios.filter { scenario in
            (cases.isEmpty || cases.contains { glob($0, matches: scenario.id) }) && (level == nil || scenario.level.rawValue == level)
        }.flatMap { scenario in
            scenario.profiles.filter { profile.isEmpty || profile.contains($0) }.map { (scenario, $0) }
        }
        guard !selected.isEmpty else {
            FileHandle.standardError.write(Data("no case matches the filters (\(scenarios.count) scenarios read)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
        print("authmock run: \(selected.count) cases from \(files.count) files, driver: \(driver)")
        let started = ContinuousClock.now
        let verbose = self.verbose
        let results = await ScenarioRunner.run(
            selected, options: RunOptions(driver: driver, jobs: jobs, expectedFailures: known)
        ) { result in
            print(Reports.progressLine(result))
            if verbose { for finding in result.findings { print("           \(finding.passed ? "ok" : "x ") \(finding.expectation): \(finding.message)") } }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        for result in results { print(Reports.details(result), terminator: "") }
        print(Reports.summary(results, seconds: seconds), terminator: "")
        if let junit { try Reports.junit(results, seconds: seconds).write(toFile: junit, atomically: true, encoding: .utf8) }
        if let json { try Reports.json(results, seconds: seconds, driver: driver).write(toFile: json, atomically: true, encoding: .utf8) }
        if results.contains(where: { $0.verdict == .fail || $0.verdict == .error }) { throw ExitCode(RunExit.failures) }
    }
}

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

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema of scenario files (the source of docs/scenario.schema.json).")

    func run() {
        print(ScenarioFormat.jsonSchema(), terminator: "")
    }
}

/// `*` and `?` globs for case ids.
func glob(_ pattern: String, matches text: String) -> Bool {
    let p = Array(pattern), t = Array(text)
    func match(_ i: Int, _ j: Int) -> Bool {
        if i == p.count { return j == t.count }
        if p[i] == "*" { return (j...t.count).contains { match(i + 1, $0) } }
        guard j < t.count, p[i] == "?" || p[i] == t[j] else { return false }
        return match(i + 1, j + 1)
    }
    return match(0, 0)
}

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

struct MatrixCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Run several drivers through the suite and write the compatibility matrix (Markdown and HTML).")

    @Argument(help: "Scenario files or directories (default: scenarios/).") var paths: [String] = []
    @Option(help: "NAME=COMMAND of a driver; repeatable, in column order.") var driver: [String] = []
    @Option(name: .customLong("expected-failures"), help: "NAME=FILE: a driver's expected-failures file; repeatable.") var expectedFailures: [String] = []
    @Option(help: "Write the Markdown matrix here.") var markdown: String = "docs/compatibility.md"
    @Option(help: "Write the HTML matrix here.") var html: String = "docs/compatibility.html"
    @Option(help: "Cases run at once.") var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    func run() async throws {
        let scenarios = try ScenarioLoader.files(in: paths.isEmpty ? ["scenarios"] : paths).map { try ScenarioLoader.load(file: $0) }
        let cases = scenarios.flatMap { scenario in scenario.profiles.map { (scenario, $0) } }
        var known: [String: [String: String]] = [:]
        for entry in expectedFailures {
            let (name, file) = try split(entry, "--expected-failures")
            known[name] = try ExpectedFailures.load(path: file)
        }
        var columns: [CompatibilityReport.Column] = []
        for entry in driver {
            let (name, command) = try split(entry, "--driver")
            print("running \(name): \(command)")
            let results = await ScenarioRunner.run(cases, options: RunOptions(driver: command, jobs: jobs, expectedFailures: known[name] ?? [:]))
            print(Reports.summary(results, seconds: results.reduce(0) { $0 + $1.seconds }), terminator: "")
            columns.append(.init(name: name, results: results))
        }
        try CompatibilityReport.markdown(columns).write(toFile: markdown, atomically: true, encoding: .utf8)
        try CompatibilityReport.html(columns).write(toFile: html, atomically: true, encoding: .utf8)
        print("wrote \(markdown) and \(html)")
    }

    func split(_ entry: String, _ flag: String) throws -> (String, String) {
        guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else { throw ValidationError("\(flag) takes NAME=VALUE, got '\(entry)'") }
        return (String(entry[..<equals]), String(entry[entry.index(after: equals)...]))
    }
}
