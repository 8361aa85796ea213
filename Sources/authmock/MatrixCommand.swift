import AuthmockDialect
import ArgumentParser
import AuthmockScenario
import AuthmockTransports
import AuthmockServer
import DriverProtocol
import Foundation

struct MatrixCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Run several drivers through the suite and write the compatibility matrix (Markdown and HTML).")

    @Argument(help: "Case files or directories to add to the built-in suite (a case with a built-in id replaces it).") var paths: [String] = []
    @Flag(inversion: .prefixedNo, help: "Include the built-in suite.") var builtIn = true
    @Option(help: "NAME=COMMAND of a driver; repeatable, in column order.") var driver: [String] = []
    @Option(name: .customLong("expected-failures"), help: "NAME=FILE: a driver's expected-failures file; repeatable.") var expectedFailures:
        [String] = []
    @Option(
        help: """
            NAME=REPORT: a column read from a saved JSON report (`authmock run --json`) instead of run here: a library \
            this machine cannot build, measured elsewhere. Repeatable; after the --driver columns. The same NAME again adds \
            a run to its column: a case whose verdicts differ reads FAIL 2 of 8.
            """)
    var measured: [String] = []
    @Option(help: "Write the Markdown matrix here.") var markdown: String = "docs/compatibility.md"
    @Option(help: "Write the HTML matrix here.") var html: String = "docs/compatibility.html"
    @Option(help: "Cases run at once, per driver (default: 32 per core, as authmock run).") var jobs: Int = RunOptions.defaultJobs
    @Option(help: "Runs of each --driver: a case whose verdicts differ between runs (a race in the client) reads FAIL 2 of 8.")
    var runs: Int = 1
    @Option(
        help: "The driver NAME that is authmock's reference client, not a library: its column does not keep rows in view that every library skips.")
    var reference: String = "reference"

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs takes a number of runs, 1 or more, got \(runs)") }
    }

    func run() async throws {
        StopOnSignal.install()
        // The identity providers' built-in dialects run too, wherever a case
        // applies: their own SDKs' drivers speak only them (a vendor SDK's).
        let providers = Dialects.names.filter { !BuiltinSuite.caseDialects.contains($0) }.compactMap(DialectLoader.builtin)
        let cases = try SuiteSelection.assemble(paths: paths, builtIn: builtIn).scenarios.flatMap { scenario in
            (scenario.profiles + providers.filter { scenario.applies(to: $0.description) }.map(\.description.name)).map { (scenario, $0) }
        }
        var known: [String: [String: String]] = [:]
        for entry in expectedFailures {
            let (name, file) = try split(entry, "--expected-failures")
            known[name] = try ExpectedFailures.load(path: file)
        }
        var columns: [CompatibilityReport.Column] = []
        for entry in driver {
            let (name, command) = try split(entry, "--driver")
            print("running \(name): \(command)")
            var options = RunOptions(driver: command, jobs: jobs, expectedFailures: known[name] ?? [:])
            options.dialects = Dictionary(uniqueKeysWithValues: providers.map { ($0.description.name, $0) })
            var column = CompatibilityReport.Column(name: name, results: [], isReference: name == reference)
            for run in 1...max(1, runs) {
                let results = await ScenarioRunner.run(cases, options: options)
                if runs > 1 { print("run \(run) of \(runs): ", terminator: "") }
                print(Reports.summary(results, seconds: results.reduce(0) { $0 + $1.seconds }), terminator: "")
                if run == 1 { column.results = results } else { column.otherRuns.append(results) }
            }
            columns.append(column)
        }
        for entry in measured {
            let (name, path) = try split(entry, "--measured")
            let report: ReportMerge.Report
            do {
                report = try ReportMerge.read(path)
            } catch {
                throw ValidationError("--measured \(name): \(error)")
            }
            // A report of another suite is shown, and says which it ran.
            let suite = report.suite.builtIn.map { $0 == BuiltinSuite.version ? "" : ", built-in suite \($0)" } ?? ""
            print("read \(name): \(report.cases.count) case runs from \(path)")
            // The same name again: another run of that column.
            if let index = columns.firstIndex(where: { $0.name == name && $0.measured != nil }) {
                columns[index].otherRuns.append(report.cases)
                columns[index].measured! += ", `\(path)`\(suite)"
            } else {
                columns.append(.init(name: name, results: report.cases, measured: "`\(path)`\(suite)"))
            }
        }
        try CompatibilityReport.write(columns, markdown: markdown, html: html)
        print("wrote \(markdown) and \(html)")
    }

    func split(_ entry: String, _ flag: String) throws -> (String, String) {
        guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
            throw ValidationError("\(flag) takes NAME=VALUE, got '\(entry)'")
        }
        return (String(entry[..<equals]), String(entry[entry.index(after: equals)...]))
    }
}
