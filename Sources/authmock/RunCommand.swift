import AuthmockFileFormat
import AuthmockDialect
import ArgumentParser
import AuthmockCore
import AuthmockScenario
import AuthmockTransports
import AuthmockServer
import DriverProtocol
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
            FAILed or ERRORed, 1 otherwise, 2 for bad usage or invalid scenario files; stopped by a signal, it stops every \
            driver it started and exits 128 + the signal's number.
            """
    )

    @Argument(help: "Case files or directories to add to the built-in suite (a case with a built-in id replaces it).") var paths: [String] = []
    @Flag(inversion: .prefixedNo, help: "Run the built-in suite (compiled into authmock) beside the paths.") var builtIn = true
    @Option(help: "Shell command that starts the driver, e.g. \"python3 drivers/python-authlib/driver.py\".") var driver: String?
    @Flag(help: "Wait for clients to connect over a WebSocket (apps, simulators, browsers) instead of starting a driver.") var attach = false
    @Option(help: "--attach: HOST:PORT to listen on (default 127.0.0.1 and a free port; 0.0.0.0:PORT for a device).") var listen: String?
    @Option(name: .customLong("public-url"), help: "--attach: http://HOST the client reaches this machine by (Android emulator: http://10.0.2.2).")
    var publicURL: String?
    @Option(name: .customLong("attach-timeout"), help: "--attach: seconds to wait for a client before a case is an ERROR.") var attachTimeout:
        Double = 300
    @Option(help: "--attach: directory served under /assets/ to the browser page (e.g. a library's browser build).") var assets: String?
    @Option(help: "--attach: command started once listening ({page} is the page URL, {attach} the WebSocket URL), stopped at the end.")
    var launch: String?
    @Option(name: .customLong("case"), help: "Only cases whose id matches this glob (e.g. 1.* or 2.1); repeatable.") var cases: [String] = []
    @Option(help: "The same as --dialect NAME: only this built-in dialect's cases (the word earlier versions used); repeatable.")
    var profile: [String] = []
    @Option(
        name: .customLong("dialect"),
        help: ArgumentHelp(
            "A built-in dialect's name (only its cases run: `authmock dialects` lists them), or a dialect file (docs/dialects.md): every case that applies to it runs against it, and the built-in dialects run only when named too; repeatable.",
            valueName: "name-or-file")
    )
    var dialectArguments: [String] = []

    /// The built-in dialects asked for by name, with --dialect NAME or --profile NAME.
    var dialectNames: [String] { profile + dialectArguments.filter(Self.namesABuiltIn) }
    /// The dialect files given with --dialect.
    var dialectFiles: [String] { dialectArguments.filter { !Self.namesABuiltIn($0) } }
    /// A built-in dialect's name, not a path: `envelope`, not `./envelope.yaml`.
    static func namesABuiltIn(_ argument: String) -> Bool {
        Dialects.names.contains(argument) && !argument.contains("/") && !FileManager.default.fileExists(atPath: argument)
    }
    @Option(help: "Only cases of this level: must or should.") var level: String?
    @Option(help: "Cases run at once (default: 32 per core with --driver, since a case mostly waits; one per core with --attach).") var jobs: Int?
    @Option(
        help:
            "K/N: run only the K-th of N deterministic parts of the selected case runs (one CI machine of N); `authmock report merge` combines the parts' JSON reports."
    )
    var shard: String?
    @Option(name: .customLong("expected-failures"), help: "YAML file of cases the driver is known to fail, with reasons (reported as SKIP).")
    var expectedFailures: String?
    @Option(
        help:
            "Token store of the case servers: memory (default), sqlite (a fresh file per case) or a postgres:// URL (own tables per case, dropped after)."
    )
    var state = "memory"
    @Flag(
        help:
            "Serve every case over HTTPS with a certificate made for the run (drivers find it in AUTHMOCK_CA_FILE and in hello's caCertificate); a driver that declares the tls capability gets this without the flag."
    ) var tls = false
    @Option(help: "Write a JUnit XML report here.") var junit: String?
    @Option(help: "Write a JSON report here.") var json: String?
    @Option(help: "Write an HTML report of this run here: causes, then each case run's findings, time line and journal.") var html: String?
    @Flag(help: "List every passing case run too (folded into the summary by default), and every finding of each.") var verbose = false
    @Flag(name: .customLong("show-skips"), help: "List every skipped case run (by default they are folded into one line per reason).") var showSkips =
        false

    func run() async throws {
        StopOnSignal.install()
        let suite: SuiteSelection
        do {
            suite = try SuiteSelection.assemble(paths: paths, builtIn: builtIn)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
        let (known, caseState, part) = try checkedOptions()
        let reports = ReportFiles(junit: junit, json: json, html: html)
        try reports.makeFolders()
        let scenarios = suite.scenarios
        let (filtered, dialects) = try selectedRuns(scenarios)
        // A shard of a small selection may be empty: its report is then empty, not an error.
        let selected = part?.select(filtered) ?? filtered
        guard !filtered.isEmpty else {
            FileHandle.standardError.write(Data("no case matches the filters (\(scenarios.count) scenarios read)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
        // A case mostly waits (held requests, real-time sleeps for client
        // clocks): 2 cores run 64 at once with the same verdicts, drivers
        // starting one per core (StartupGate; TransportIndependenceTests,
        // TeethMatrixTests). Attached clients are few: one per core.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let jobs = max(1, self.jobs ?? (attach ? cores : RunOptions.defaultJobs))
        let started = ContinuousClock.now
        let printer = ProgressPrinter(total: selected.count, verbose: verbose, showSkips: showSkips)
        let progress: @Sendable (CaseResult) -> Void = { printer.finished($0) }
        let results: [CaseResult]
        let driver: String
        if let command = self.driver {
            driver = command
            let of = part.map { ", shard \($0) of \(filtered.count) case runs" } ?? ""
            printNow("authmock run: \(Plural.count(selected.count, "case run")) from the \(suite.description)\(of), driver: \(driver)")
            var options = RunOptions(driver: driver, jobs: jobs, expectedFailures: known)
            options.caseServerState = caseState
            options.openState = { try await ServerState.open($0, patience: $1) }
            options.dialects = dialects
            options.servesTLS = tls
            results = await ScenarioRunner.run(selected, options: options, progress: progress)
        } else {
            (driver, results) = try await runAttached(selected, suite: suite, known: known, dialects: dialects, progress: progress)
        }
        let elapsed = ContinuousClock.now - started
        let seconds = elapsed.inSeconds
        print(Reports.failures(results, everyCase: verbose), terminator: "")
        if !showSkips { print(Reports.foldedSkips(results), terminator: "") }
        let suiteVersion = suite.includesBuiltIn ? BuiltinSuite.version : nil
        try finishRun(results, seconds: seconds, driver: driver, suite: suiteVersion, reports: reports)
    }
}

extension RunCommand {
    /// The options read and checked: the expected failures, the case
    /// servers' store, the shard; a bad one is a usage error.
    func checkedOptions() throws -> (known: [String: String], caseState: CaseServerState, part: Shard?) {
        guard level == nil || level == "must" || level == "should" else { throw ValidationError("--level takes must or should") }
        guard (driver == nil) == attach else { throw ValidationError("give either --driver COMMAND or --attach") }
        guard attach || (listen == nil && publicURL == nil && assets == nil && launch == nil) else {
            throw ValidationError("--listen, --public-url, --assets and --launch go with --attach")
        }
        var known: [String: String] = [:]
        if let expectedFailures {
            do {
                known = try ExpectedFailures.load(path: expectedFailures)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode(RunExit.usage)
            }
        }
        guard let caseState = CaseServerState(state) else {
            throw ValidationError("--state takes memory, sqlite or a postgres://USER@HOST:PORT/DATABASE URL; got '\(state)'")
        }
        var part: Shard? = nil
        if let shard {
            guard let parsed = Shard(shard) else { throw ValidationError("--shard takes K/N with 1 <= K <= N, e.g. 2/4; got '\(shard)'") }
            part = parsed
        }
        return (known, caseState, part)
    }

    /// The case runs --case, --level and --dialect select, and the dialects
    /// they run on; a name no built-in dialect has, or a case's dialect no
    /// file declares, is a usage error.
    func selectedRuns(_ scenarios: [Scenario]) throws -> (runs: [(Scenario, String)], dialects: [String: LoadedDialect]) {
        var selection = CaseSelection(ids: cases, level: level, profiles: dialectNames)
        selection.dialects = try loadDialects(namedIn: selection.chosen(scenarios))
        let dialects = selection.dialects
        if let unknown = profile.first(where: { !Dialects.names.contains($0) && dialects[$0] == nil }) {
            throw ValidationError(
                "--profile '\(unknown)' (the same as --dialect NAME) is no built-in dialect\(Suggestion.hint(for: unknown, in: Dialects.names)) (\(Dialects.names.joined(separator: ", "))); a dialect of your own: pass its file with --dialect FILE"
            )
        }
        if let (scenario, name) = selection.undeclared(scenarios).first {
            let first = "\(scenario.file): case \(scenario.id) runs on '\(name)'"
            let names = dialects.keys.sorted()
            let known = names.isEmpty ? "no --dialect was given" : "--dialect declares \(names.joined(separator: ", "))"
            FileHandle.standardError.write(Data("\(first), a dialect no --dialect FILE declares (\(known))\n".utf8))
            throw ExitCode(RunExit.usage)
        }
        // With a dialect file the built-in dialects run only when named too.
        return (selection.runs(scenarios), dialects)
    }
}

/// The report files a run (or a merge of shards) writes.
struct ReportFiles {
    var junit: String?
    var json: String?
    var html: String?

    /// Makes each report's folder, before a run rather than at its end: a run
    /// of many minutes is not lost for want of a folder or a write permission.
    func makeFolders() throws {
        for path in [junit, json, html].compactMap({ $0 }) {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw ValidationError("cannot make the folder \(folder.path) for the report \(path): \(error.localizedDescription)")
            }
        }
    }

    /// Writes one report, saying which and where when that fails.
    static func write(_ text: String, to path: String, _ kind: String) throws {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("cannot write the \(kind) report to \(path): \(error.localizedDescription)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
    }
}

/// The end of a run, whole or merged from shards: the counts, the reports
/// asked for, and exit status 1 when a case FAILed or ERRORed.
func finishRun(_ results: [CaseResult], seconds: Double, driver: String, suite: String?, reports: ReportFiles) throws {
    print(Reports.summary(results, seconds: seconds, suite: suite), terminator: "")
    if let junit = reports.junit {
        try ReportFiles.write(Reports.junit(results, seconds: seconds, suite: suite), to: junit, "JUnit")
    }
    if let json = reports.json {
        try ReportFiles.write(Reports.json(results, seconds: seconds, driver: driver, suite: suite), to: json, "JSON")
    }
    if let html = reports.html {
        let page = RunReportPage.html(results, run: RunReportPage.Run(driver: driver, seconds: seconds, suite: suite))
        try ReportFiles.write(page, to: html, "HTML")
        print("report: \(html)")
    }
    if results.contains(where: { $0.verdict == .fail || $0.verdict == .error }) { throw ExitCode(RunExit.failures) }
    // A run that judged nothing is no pass: CI would go green on a driver that
    // speaks none of the selected dialects.
    if !results.isEmpty && results.allSatisfy({ $0.verdict == .skip && $0.knownFailure == nil }) {
        print("nothing was judged: every case run was skipped (the reasons are above); exit status 1")
        throw ExitCode(RunExit.failures)
    }
}

extension RunCommand {
    /// The `--dialect` files by name; a broken one is a usage error (exit 2) with its place.
    /// The `--dialect` files, and the built-in dialect files that drivers
    /// know only by description, where --dialect NAME or a chosen case names them.
    func loadDialects(namedIn chosen: [Scenario]) throws -> [String: LoadedDialect] {
        var dialects = CaseSelection.builtinDialects(named: dialectNames + chosen.flatMap(\.profiles))
        for path in dialectFiles {
            do {
                let loaded = try DialectLoader.load(fileOrBuiltin: path)
                if let other = dialects[loaded.description.name] {
                    throw ValidationError("\(path) and \(other.file) both declare the dialect '\(loaded.description.name)'")
                }
                dialects[loaded.description.name] = loaded
            } catch let error as ScenarioError {
                FileHandle.standardError.write(Data("\(error) (authmock validate \(path) lists every problem)\n".utf8))
                throw ExitCode(RunExit.usage)
            }
        }
        return dialects
    }

    /// `--attach`: the runner listens, clients connect and serve the cases.
    func runAttached(
        _ selected: [(Scenario, String)], suite: SuiteSelection, known: [String: String], dialects: [String: LoadedDialect],
        progress: @escaping @Sendable (CaseResult) -> Void
    ) async throws -> (String, [CaseResult]) {
        var attachOptions = AttachOptions()
        do {
            if let listen { try attachOptions.setListen(listen) }
            if let publicURL { try attachOptions.setPublicURL(publicURL) }
        } catch {
            throw ValidationError(error.description)
        }
        attachOptions.timeout = attachTimeout
        attachOptions.assetsDirectory = assets
        let hub = AttachHub(timeout: attachTimeout) { printNow("attach: \($0)") }
        var options = RunOptions(transport: hub, jobs: max(1, jobs ?? ProcessInfo.processInfo.activeProcessorCount), expectedFailures: known)
        options.dialects = dialects
        options.caseServerHost = attachOptions.listenHost
        options.caseServerAdvertisedHost = attachOptions.publicHost ?? (["0.0.0.0", "::"].contains(attachOptions.listenHost) ? "127.0.0.1" : nil)
        // The browser page is served from another port: another origin.
        options.caseServerCORS = "*"
        options.servesTLS = tls
        let launch = self.launch
        let base = options
        let count = selected.count
        let description = suite.description
        do {
            let results = try await AttachServer.serving(hub: hub, options: attachOptions) {
                let url = await hub.attachURL
                let page = await hub.pageURL
                let options = base
                // Flushed at once: in CI the output is a pipe, and the URL is what the client needs.
                printNow("authmock run: \(Plural.count(count, "case")) from the \(description), attach: \(url)")
                printNow("  a client connects to \(url) (DriverKit: Driver.attach(to:), a browser: open \(page))")
                guard let launch else { return await ScenarioRunner.run(selected, options: options, progress: progress) }
                let command = launch.replacingOccurrences(of: "{page}", with: page).replacingOccurrences(of: "{attach}", with: url)
                return await LaunchedCommand.around(command: command, environment: ["AUTHMOCK_PAGE_URL": page, "AUTHMOCK_ATTACH_URL": url]) {
                    startError in
                    printNow(startError.map { "  --launch: \($0)" } ?? "  launched: \(launch)")
                    return await ScenarioRunner.run(selected, options: options, progress: progress)
                }
            }
            return ("attach \(await hub.attachURL)", results)
        } catch let error as AttachSetupError {
            FileHandle.standardError.write(Data("\(error.description)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
    }
}
