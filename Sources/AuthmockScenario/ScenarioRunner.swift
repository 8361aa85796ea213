import AuthmockDialect
import AuthmockFileFormat
import AuthmockCore
import AuthmockModel
import AuthmockServer
import DriverProtocol
import Foundation

extension ScenarioRunner {
    /// Claims for a finding's message: `sub=mallory, iss=...`, sorted.
    static func claimsText(_ claims: [String: JSONValue]) -> String {
        claims.keys.sorted().compactMap { key in
            switch claims[key] {
            case .string(let value): "\(key)=\(value)"
            case .integer(let value): "\(key)=\(value)"
            default: nil
            }
        }.joined(separator: ", ")
    }
}

/// Replays scenarios against a driver: a fresh in-process server and a fresh
/// driver process per case, steps executed in order, then the expectations
/// judged from the server's journal and the outcomes the driver reported.
public enum ScenarioRunner {
    /// Runs every (scenario, dialect) pair, `jobs` at a time; results come
    /// back in the order given, whatever order they finished in. The cases
    /// that must wait longest in real time start first, so the suite's wall
    /// time is its longest case rather than that case started last.
    public static func run(
        _ cases: [(Scenario, String)], options: RunOptions,
        progress: @escaping @Sendable (CaseResult) -> Void = { _ in }
    ) async -> [CaseResult] {
        var probed = options
        if probed.driverInfo == nil, let first = cases.first {
            switch await probe(options, profile: first.1).flatMap({ DriverInfo.speaksAKnownDialect($0, declared: Set(options.dialects.keys)) }) {
            case .success(let info): probed.driverInfo = info
            case .failure(let failure):
                // A driver that cannot say hello can run no case: one ERROR, not one per case.
                let result = failure.result(profile: first.1)
                progress(result)
                return [result]
            }
        }
        if probed.startups == nil, probed.transport.startsProcesses {
            probed.startups = StartupGate(limit: ProcessInfo.processInfo.activeProcessorCount)
        }
        // HTTPS when asked (`--tls`) or when the client talks HTTPS only;
        // the probe's hello (over plain HTTP) needed no request.
        if probed.servesTLS || probed.driverInfo?.capabilities.contains(Capability.tls) == true {
            do {
                probed.caseServerTLS = try CaseServerTLS.make(extraNames: probed.caseServerAdvertisedHost.map { [$0] } ?? [])
            } catch {
                let result = HelloFailure(reason: "the cases are served over HTTPS, and no certificate could be made: \(error)", stderr: "")
                    .result(profile: cases.first?.1 ?? "")
                progress(result)
                return [result]
            }
        }
        defer { probed.caseServerTLS?.discard() }
        let options = probed
        return await withTaskGroup(of: (Int, CaseResult).self) { group in
            var results = [CaseResult?](repeating: nil, count: cases.count)
            let order = launchOrder(cases, jobs: options.jobs)
            var next = 0
            func launch() {
                guard next < cases.count else { return }
                let index = order[next]
                let (scenario, profile) = cases[index]
                next += 1
                group.addTask { (index, await runCase(scenario, profile: profile, options: options)) }
            }
            for _ in 0..<min(options.jobs, cases.count) { launch() }
            while let (index, result) = await group.next() {
                results[index] = result
                progress(result)
                launch()
            }
            return results.compactMap { $0 }
        }
    }

    /// The order case runs start in: the longest real-time waits first (clock
    /// variants, `sleep` steps), ties in the given order; one at a time, the
    /// given order (progress lines then follow the files).
    public static func launchOrder(_ cases: [(Scenario, String)], jobs: Int) -> [Int] {
        guard jobs > 1 else { return Array(cases.indices) }
        let waits = cases.map(\.0.realSeconds)
        return cases.indices.sorted { (-waits[$0], $0) < (-waits[$1], $1) }
    }

    /// Why the driver could not answer `hello`: the run stops with this, once.
    public struct HelloFailure: Error, Sendable {
        public var reason: String
        public var stderr: String
        /// The conversation broke (a disconnect, a frame that is not a
        /// message) rather than the driver answering: an attached client
        /// that does this is not the app's answer, and the next one is asked.
        var brokeTheConversation = false

        /// The one ERROR a run that could not start reports.
        func result(profile: String) -> CaseResult {
            CaseResult(
                id: "hello", name: "the driver starts and answers hello", profile: profile, level: Scenario.Level.must.rawValue, file: "-",
                verdict: .error, reason: "the driver failed hello, so no case ran: \(reason)", findings: [], calls: [], journal: [],
                driverStderr: stderr, seconds: 0)
        }
    }

    /// Starts the driver once and asks `hello`, against a server of `profile`.
    /// Attached, a client that drops or garbles the conversation before it
    /// answers is followed by the next one to attach (an app restarting,
    /// a stray connection), until the attach timeout passes with none.
    public static func probe(_ options: RunOptions, profile: String) async -> Result<DriverInfo, HelloFailure> {
        var answer = await probeOnce(options, profile: profile)
        let end = Date().addingTimeInterval(options.transport.helloPatience)
        while case .failure(let failure) = answer, failure.brokeTheConversation, Date() < end {
            answer = await probeOnce(options, profile: profile)
        }
        return answer
    }

    /// PostgreSQL's deadline for case servers (seconds) unless `--state`'s
    /// URL sets one: serve's 1 s makes an outage a fast 503, but a case
    /// server meets no outage, and a 503 because a loaded machine kept the
    /// database waiting would be judged as the client's.
    static let databasePatience: Double = 10

    private static func probeOnce(_ options: RunOptions, profile: String) async -> Result<DriverInfo, HelloFailure> {
        var serverOptions = caseServerOptions(profile: profile, options: options)
        serverOptions.journalLimit = 100
        let deadline = ContinuousClock.now + .seconds(20)
        let mock: Authmock
        do {
            mock = try await Authmock(options: serverOptions, state: try await options.openState(serverOptions, Self.databasePatience))
        } catch {
            return .failure(HelloFailure(reason: "the in-process server did not start: \(error)", stderr: ""))
        }
        defer { Task { await CaseServerState.discard(mock) } }
        let answer = await serving(mock) { () -> Result<DriverInfo, HelloFailure> in
            let client = mock.control.client
            let (result, stderr) = await options.transport.converse(environment: environment(options, mock: mock, profile: profile)) { channel in
                let id = try await channel.post { hello(id: $0, mock: mock, profile: profile, client: client, driver: nil, attached: false) }
                let greeting = try await channel.answer(id, deadline: deadline)
                let shutdownID = try await channel.post { .shutdown(id: $0) }
                _ = try? await channel.answer(shutdownID, deadline: .now + .seconds(3))
                guard greeting.ok else { throw DriverFailure.badAnswer(line: greeting.line, problem: "hello was refused") }
                return DriverInfo(
                    name: greeting.driver, version: greeting.version, profiles: greeting.profiles,
                    capabilities: greeting.capabilities ?? [], renewalMargin: greeting.renewalMargin)
            }
            return result.mapError { error in
                var failure = HelloFailure(reason: (error as? DriverFailure)?.description ?? "\(error)", stderr: stderr)
                switch error as? DriverFailure {
                case .exitedEarly, .notJSON: failure.brokeTheConversation = true
                case .badAnswer(_, let problem): failure.brokeTheConversation = problem != "hello was refused"
                default: break
                }
                return failure
            }
        }
        switch answer {
        case .success(let hello): return hello
        case .failure(let error): return .failure(HelloFailure(reason: "the in-process server did not start: \(error)", stderr: ""))
        }
    }

    /// A case server's options before the scenario's own `server:` settings.
    static func caseServerOptions(profile: String, options: RunOptions) -> ServerOptions {
        var serverOptions = ServerOptions(host: options.caseServerHost, port: 0, profile: profile, signingKey: .random())
        serverOptions.tokens.accessTTL = Scenario.caseAccessSeconds
        // A declared dialect: its description, and its backend's traits.
        options.dialects[profile]?.applyTraits(to: &serverOptions)
        serverOptions.advertisedHost = options.caseServerAdvertisedHost
        serverOptions.tls = options.caseServerTLS?.identity
        serverOptions.corsOrigin = options.caseServerCORS
        options.caseServerState.configure(&serverOptions)
        // A verdict reads every token of its case: nothing is pruned.
        serverOptions.tokens.pruneAfterSeconds = 0
        // Beyond loopback the control API needs a token; the runner steers the server in process.
        if !serverOptions.listensOnLoopbackOnly { serverOptions.adminToken = UUID().uuidString }
        return serverOptions
    }

    static func environment(_ options: RunOptions, mock: Authmock, profile: String) -> [String: String] {
        let client = mock.control.client
        var environment = options.environment
        environment["AUTHMOCK_BASE_URL"] = mock.baseURL
        environment["AUTHMOCK_PROFILE"] = profile
        environment["AUTHMOCK_CLIENT_ID"] = client.id
        environment["AUTHMOCK_CLIENT_SECRET"] = client.secret ?? ""
        if let tls = options.caseServerTLS { environment["AUTHMOCK_CA_FILE"] = tls.certificateFile }
        return environment
    }

    /// `driver`: what the driver said of itself, nil before it has (the
    /// probe, an attached client). The dialect's description (a declared
    /// one's, or a built-in file's: every dialect but oauth2 has one) goes to
    /// a driver with the `dialect` capability, and wherever the capabilities
    /// are not known yet: the probe, and an attached client, whose
    /// capabilities arrive in the answer to this very message (a driver
    /// without the capability ignores it).
    static func hello(id: String, mock: Authmock, profile: String, client: Client, driver: DriverInfo?, attached: Bool) -> RunnerMessage {
        let sendsDialect = attached || (driver?.capabilities.contains(Capability.dialect) ?? true)
        return .hello(
            id: id, baseURL: mock.baseURL, profile: profile, clientID: client.id, clientSecret: client.secret ?? "",
            dialect: sendsDialect ? mock.options.dialect ?? BuiltinDialects.description(profile) : nil,
            caCertificate: mock.options.tls?.certificatePEM)
    }

    /// Runs `body` while `mock` serves in process; the reason when it cannot start.
    static func serving<T>(_ mock: Authmock, _ body: () async -> T) async -> Result<T, any Error> {
        // A case server's certificate was checked when its mock was made.
        let running: RunningMock
        do {
            running = try await RunningMock.start(mock)
        } catch {
            return .failure(error)
        }
        let value = await body()
        await running.stop()
        return .success(value)
    }

    public static func runCase(_ scenario: Scenario, profile: String, options: RunOptions) async -> CaseResult {
        let started = ContinuousClock.now
        let wallStart = Date()
        var result = CaseResult(
            id: scenario.id, name: scenario.name, profile: profile, level: scenario.level.rawValue, file: scenario.file,
            verdict: .error, findings: [], calls: [], journal: [], driverStderr: "", seconds: 0,
            driver: options.driverInfo?.name, driverVersion: options.driverInfo?.version)
        result.digest = scenario.digest
        if let reason = skipReason(scenario, profile: profile, options: options) {
            result.verdict = .skip
            result.reason = reason
            return result
        }
        let scenario = scenario.lengthened(forRenewalMargin: options.driverInfo?.renewalMargin ?? 0)
        var serverOptions = caseServerOptions(profile: profile, options: options)
        scenario.server.apply(to: &serverOptions)
        let mock: Authmock
        do {
            mock = try await Authmock(options: serverOptions, state: try await options.openState(serverOptions, Self.databasePatience))
        } catch {
            result.reason = "the scenario's server settings were refused: \(error)"
            return result
        }
        if case .failure(let error) = await serving(mock, { await converse(&result) }) {
            result.reason = "the in-process server did not start: \(error)"
        }
        await CaseServerState.discard(mock)
        let elapsed = ContinuousClock.now - started
        result.seconds = elapsed.inSeconds
        return result

        /// The case proper, while the server runs.
        func converse(_ result: inout CaseResult) async {

            let client = mock.control.client
            let startup = await options.startups?.enter()
            let (conversation, stderr) = await options.transport.converse(environment: environment(options, mock: mock, profile: profile)) {
                channel in
                // The timeout runs from when the driver is there (an attached
                // client may first finish another case).
                let deadline = ContinuousClock.now + .milliseconds(Int(scenario.timeout * 1000))
                let play = Play(
                    scenario: scenario, profile: profile, mock: mock, steering: options.steering(mock), deadline: deadline, start: wallStart)
                return try await play.run(channel, greeted: { startup?.leave() }) {
                    hello(
                        id: $0, mock: mock, profile: profile, client: client, driver: options.driverInfo,
                        attached: options.transport.capabilitiesArriveWithHello)
                }
            }
            startup?.leave()
            result.driverStderr = stderr
            let (calls, clearedFaults) = record(conversation, into: &result, start: wallStart)
            await attachEvidence(mock, calls: calls, clearedFaults: clearedFaults, to: &result, start: wallStart)
            if result.verdict != .skip && result.reason == nil {
                let failed = result.failedFindings
                result.verdict = failed.contains(where: \.isMust) ? .fail : failed.isEmpty ? .pass : .nonStrict
            }
            applyExpectedFailure(options.expectedFailures, to: &result)
        }
    }

    /// Why a case run is skipped before any driver starts: what the run's
    /// one hello said the driver cannot do, or a host name it cannot reach.
    static func skipReason(_ scenario: Scenario, profile: String, options: RunOptions) -> String? {
        if let reason = options.driverInfo?.cannotRun(scenario, profile: profile) { return reason }
        if scenario.callsAnotherHost, let host = options.caseServerAdvertisedHost, !["127.0.0.1", "localhost"].contains(host) {
            return "the case calls another host name of the server (localhost), which the client does not reach at \(host)"
        }
        return nil
    }

    /// What the conversation with the driver brought: the calls, findings,
    /// causes and the driver's identity, or why it ended in an error.
    /// Returns the calls, and the fault rules a `clear_faults` step removed.
    static func record(
        _ conversation: Result<Play.Outcome, any Error>, into result: inout CaseResult, start: Date
    ) -> (calls: [CallRecord], clearedFaults: [FaultRuleView]) {
        do {
            let outcome = try conversation.get()
            result.calls = outcome.calls.map { $0.summary(start: start) }
            result.causes = outcome.causes
            result.notes = outcome.notes.isEmpty ? nil : outcome.notes
            result.signedOut = outcome.signedOutAt.map { ($0.timeIntervalSince(start) * 1000).rounded() / 1000 }
            result.judgedThrough = outcome.judgedThrough
            result.driver = outcome.driver
            result.driverVersion = outcome.version
            result.driverHello = outcome.hello
            switch outcome.stop {
            case .unsupported(let reason):
                result.verdict = .skip
                result.reason = reason
            case .none, .failed:
                result.findings = outcome.findings
            }
            return (outcome.calls, outcome.clearedFaults)
        } catch let failure as DriverFailure {
            result.verdict = .error
            result.reason = failure.description
        } catch {
            result.verdict = .error
            result.reason = "\(error)"
        }
        return ([], [])
    }

    /// The journal as the report shows it, each line with its tokens' labels.
    /// The verdict already read the journal; a store failing since only
    /// shortens the evidence, and the report says which part is missing and why.
    static func attachEvidence(
        _ mock: Authmock, calls: [CallRecord], clearedFaults: [FaultRuleView], to result: inout CaseResult, start: Date
    ) async {
        let steering: any MockSteering = mock.control
        var missing: [String] = []
        func read<T>(_ what: String, _ body: () async throws -> T) async -> T? {
            do { return try await body() } catch {
                missing.append("the report's \(what) could not be read after the verdict (\(error)): it shows less than the verdict judged")
                return nil
            }
        }
        let entries = await read("journal") { try await steering.journal(JournalFilter()).entries } ?? []
        let tokens = await read("token facts") { try await steering.tokens() }.map(TokenFacts.init) ?? TokenFacts()
        var seen = Observation(entries: entries, calls: calls, tokens: tokens, start: start, endpointPaths: Set(mock.dialect.endpointPaths))
        let faults = await read("fault rules") { try await Play.faults(steering, clearedBefore: clearedFaults) } ?? clearedFaults
        if !missing.isEmpty { result.notes = (result.notes ?? []) + missing }
        seen.noteFaults(faults, cleared: Set(clearedFaults.map(\.id)))
        seen.judgedThrough = result.judgedThrough
        result.journal = evidence(entries.map(seen.line))
        result.entries = evidence(seen.reported)
    }

    /// A listed known failure stays visible, but does not fail the run; a
    /// listed one that passed says to remove it.
    static func applyExpectedFailure(_ expected: [String: String], to result: inout CaseResult) {
        guard let reason = expected[result.label] ?? expected[result.id] else { return }
        if result.verdict == .fail || result.verdict == .nonStrict {
            result.verdict = .skip
            result.knownFailure = reason
            result.reason = "known failure: \(reason)"
        } else if result.verdict == .pass {
            result.reason = "listed as a known failure (\(reason)) but passed: remove it from the expected-failures file"
        }
    }

    /// A case's journal as report evidence: a client that looped leaves
    /// thousands of requests, of which the first and the last tell the story.
    static func evidence(_ lines: [String], limit: Int = 500) -> [String] {
        guard lines.count > limit else { return lines }
        return Array(lines.prefix(limit - 100)) + ["… \(lines.count - limit) more requests …"] + Array(lines.suffix(100))
    }

    /// The same cut of the journal as data (the gap shows in the entries' `seq`).
    static func evidence(_ entries: [ReportedEntry], limit: Int = 500) -> [ReportedEntry] {
        guard entries.count > limit else { return entries }
        return Array(entries.prefix(limit - 100)) + Array(entries.suffix(100))
    }
}
