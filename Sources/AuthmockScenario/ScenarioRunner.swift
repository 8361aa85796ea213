import AuthmockCore
import AuthmockModel
import AuthmockServer
import DriverProtocol
public import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// How `authmock run` runs the suite.
public struct RunOptions: Sendable {
    /// Shell command that starts the driver.
    public var driver: String
    /// Cases run at once; each has its own server and driver.
    public var jobs: Int
    /// Case ids (`1.1`, or `1.1 [envelope]`) the driver is known to fail, with the reason.
    public var expectedFailures: [String: String]
    public var environment: [String: String]
    /// What the driver said in `hello`, learnt once per run: cases it cannot
    /// run are SKIP without starting it again.
    public var driverInfo: DriverInfo?
    /// Attach mode: clients connect to the runner instead of being started.
    public var attach: AttachHub?
    /// Where each case's server listens, and the host name it gives clients
    /// (attach mode: a device or emulator reaches the machine by another name).
    public var caseServerHost = "127.0.0.1"
    public var caseServerAdvertisedHost: String?
    /// Browser origins the case servers allow (attach mode: the page's).
    public var caseServerCORS = ""
    /// Where each case server keeps token state (`authmock run --state`).
    public var caseServerState = CaseServerState.memory
    /// Declared dialects (`--dialect`) by name: a case run whose profile is
    /// one of them is served from its file.
    public var dialects: [String: LoadedDialect] = [:]

    public init(
        driver: String, jobs: Int = ProcessInfo.processInfo.activeProcessorCount, expectedFailures: [String: String] = [:],
        environment: [String: String] = [:]
    ) {
        self.driver = driver
        self.jobs = max(1, jobs)
        self.expectedFailures = expectedFailures
        self.environment = environment
    }
}

/// The token store of the case servers: a whole suite run against each
/// store shows a store changes where state lives, not what clients see.
public enum CaseServerState: Sendable, Equatable {
    case memory
    /// A fresh SQLite file per case server, removed after it.
    case sqlite
    /// Tables of their own per case server in this database, dropped after it.
    case postgres(url: String)

    /// `memory`, `sqlite` or a `postgres://` URL.
    public init?(_ text: String) {
        switch text {
        case "memory": self = .memory
        case "sqlite": self = .sqlite
        case _ where text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"): self = .postgres(url: text)
        default: return nil
        }
    }

    func configure(_ options: inout ServerOptions) {
        let unique = UUID().uuidString.lowercased().prefix(8)
        switch self {
        case .memory: break
        case .sqlite: options.state = "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("authmock-case-\(unique).db").path
        case .postgres(let url):
            options.state = url
            options.stateTablePrefix = "authmock_c\(unique)_"
        }
    }

    /// Removes what a case server kept.
    static func discard(_ mock: Authmock) async {
        await mock.discardState()
        let state = mock.options.state
        guard state.hasPrefix("sqlite:") else { return }
        let path = String(state.dropFirst("sqlite:".count))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A driver's `hello` answer: what it wraps and what it can do.
public struct DriverInfo: Sendable, Equatable {
    public var name: String?
    public var version: String?
    /// nil: the driver did not say (every profile is tried).
    public var profiles: [String]?
    public var capabilities: [String]

    /// A driver whose `hello` names profiles, none of which exists, can run
    /// no case: a misspelt name ("oauth") would otherwise SKIP the whole suite
    /// and leave the run green having judged nothing.
    static func speaksAKnownProfile(_ info: DriverInfo, declared: Set<String> = []) -> Result<DriverInfo, ScenarioRunner.HelloFailure> {
        guard let profiles = info.profiles, !profiles.contains(where: { Profiles.names.contains($0) || declared.contains($0) }) else {
            return .success(info)
        }
        let named = profiles.map { "'\($0)'\(Suggestion.hint(for: $0, in: Profiles.names))" }.joined(separator: ", ")
        return .failure(
            ScenarioRunner.HelloFailure(
                reason: "hello lists the profiles \(named), and none is a profile authmock serves (\(Profiles.names.joined(separator: ", ")))",
                stderr: ""))
    }

    /// Why this driver cannot run the case in this profile, or nil. A
    /// declared dialect is spoken by a driver that names it, or by one that
    /// configures its client from `hello` (the `dialect` capability).
    func cannotRun(_ scenario: Scenario, profile: String) -> String? {
        let declared = !Profiles.isNamedInProtocol(profile)
        if declared, !capabilities.contains(Capability.dialect), !(profiles ?? []).contains(profile) {
            return "the driver does not speak the declared dialect \(profile) (it neither lists it nor has the `dialect` capability)"
        }
        if !declared, let profiles, !profiles.contains(profile) {
            return "the driver does not speak \(profile) (it lists \(profiles.joined(separator: ", ")))"
        }
        if scenario.callsAnotherHost && !capabilities.contains(Capability.url) {
            return "the case calls another host, and the driver does not declare the `url` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.streamsBodies && !capabilities.contains(Capability.bodyStream) {
            return
                "the case sends a one-shot streamed body, and the driver does not declare the `bodyStream` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.sendsGraphQL && !capabilities.contains(Capability.graphQL) {
            return "the case sends GraphQL operations, and the driver does not declare the `graphql` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.signsInWithOpenID && !capabilities.contains(Capability.oidc) {
            return
                "the case signs in as an OpenID Connect client, and the driver does not declare the `oidc` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.signsOut && !capabilities.contains(Capability.logout) {
            return "the case signs the user out, and the driver does not declare the `logout` capability in hello (docs/driver-protocol.md)"
        }
        return nil
    }
}

extension Scenario {
    /// Whether any call of a `request` or `parallel` step is such.
    func anyCall(_ test: (CallSpec) -> Bool) -> Bool {
        steps.contains { step in
            switch step {
            case .request(let spec, _): test(spec)
            case .parallel(let specs): specs.contains(where: test)
            default: false
            }
        }
    }

    /// Whether a call hands its body over as a one-shot stream.
    var streamsBodies: Bool { anyCall(\.bodyStream) }

    /// Whether a call is a GraphQL operation.
    var sendsGraphQL: Bool { anyCall(\.graphQL) }

    /// Whether a step signs in as an OpenID Connect client (`login: {openid: true}`).
    var signsInWithOpenID: Bool {
        steps.contains { if case .login(_, _, true, _) = $0 { true } else { false } }
    }

    /// Whether a step signs the user out (`logout`).
    var signsOut: Bool {
        steps.contains { if case .logout = $0 { true } else { false } }
    }

    /// Whether a step sends a request to another host (`//foreign/...`).
    var callsAnotherHost: Bool { anyCall { Observation.target(of: $0.path).foreign } }
}

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
    /// Runs every (scenario, profile) pair, `jobs` at a time; results come
    /// back in the order given, whatever order they finished in.
    public static func run(
        _ cases: [(Scenario, String)], options: RunOptions,
        progress: @escaping @Sendable (CaseResult) -> Void = { _ in }
    ) async -> [CaseResult] {
        var probed = options
        if probed.driverInfo == nil, let first = cases.first {
            switch await probe(options, profile: first.1).flatMap({ DriverInfo.speaksAKnownProfile($0, declared: Set(options.dialects.keys)) }) {
            case .success(let info): probed.driverInfo = info
            case .failure(let failure):
                // A driver that cannot say hello can run no case: one ERROR, not one per case.
                let result = failure.result(profile: first.1)
                progress(result)
                return [result]
            }
        }
        let options = probed
        return await withTaskGroup(of: (Int, CaseResult).self) { group in
            var results = [CaseResult?](repeating: nil, count: cases.count)
            var next = 0
            func launch() {
                guard next < cases.count else { return }
                let index = next
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
        guard let hub = options.attach else { return answer }
        let end = Date().addingTimeInterval(hub.timeout)
        while case .failure(let failure) = answer, failure.brokeTheConversation, Date() < end {
            answer = await probeOnce(options, profile: profile)
        }
        return answer
    }

    private static func probeOnce(_ options: RunOptions, profile: String) async -> Result<DriverInfo, HelloFailure> {
        var serverOptions = caseServerOptions(profile: profile, options: options)
        serverOptions.journalLimit = 100
        let deadline = ContinuousClock.now + .seconds(20)
        let mock: Authmock
        do {
            mock = try await Authmock(options: serverOptions, state: try await .open(serverOptions))
        } catch {
            return .failure(HelloFailure(reason: "the in-process server did not start: \(error)", stderr: ""))
        }
        defer { Task { await CaseServerState.discard(mock) } }
        let answer = await serving(mock) { () -> Result<DriverInfo, HelloFailure> in
            let client = mock.control.client
            let (result, stderr) = await DriverLink.with(options, environment: environment(options, mock: mock, profile: profile)) { channel in
                let id = try await channel.post { hello(id: $0, mock: mock, profile: profile, client: client, driver: nil, attached: false) }
                let greeting = try await channel.answer(id, deadline: deadline)
                let shutdownID = try await channel.post { .shutdown(id: $0) }
                _ = try? await channel.answer(shutdownID, deadline: .now + .seconds(3))
                guard greeting.ok else { throw DriverFailure.badAnswer(line: greeting.line, problem: "hello was refused") }
                return DriverInfo(
                    name: greeting.fields["driver"], version: greeting.fields["version"], profiles: greeting.profiles,
                    capabilities: greeting.capabilities ?? [])
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
        return answer ?? .failure(HelloFailure(reason: "the in-process server did not start", stderr: ""))
    }

    /// A case server's options before the scenario's own `server:` settings.
    static func caseServerOptions(profile: String, options: RunOptions) -> ServerOptions {
        var serverOptions = ServerOptions(host: options.caseServerHost, port: 0, profile: profile, signingKey: .random())
        // A declared dialect: its description. Its `settings` are `serve`'s
        // defaults; a case's lifetimes and rotation are the case's own.
        serverOptions.dialect = options.dialects[profile]?.description
        serverOptions.advertisedHost = options.caseServerAdvertisedHost
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
        return environment
    }

    /// `driver`: what the driver said of itself, nil before it has (the
    /// probe, an attached client). A declared dialect's description goes to a
    /// driver with the `dialect` capability, and to an attached client, whose
    /// capabilities arrive in the answer to this very message.
    static func hello(id: String, mock: Authmock, profile: String, client: Client, driver: DriverInfo?, attached: Bool) -> RunnerMessage {
        let sendsDialect = driver?.capabilities.contains(Capability.dialect) ?? attached
        return .hello(
            id: id, baseURL: mock.baseURL, profile: profile, clientID: client.id, clientSecret: client.secret ?? "",
            dialect: sendsDialect ? mock.options.dialect : nil)
    }

    /// Runs `body` while `mock` serves in process; nil when it cannot start.
    static func serving<T>(_ mock: Authmock, _ body: () async -> T) async -> T? {
        var logger = Logger(label: "authmock-run")
        logger.logLevel = .critical
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        // Case servers speak plain HTTP: no TLS configuration can fail here.
        guard
            let app = try? AuthmockApplication.make(
                mock: mock, logger: logger,
                onListening: { port in
                    portContinuation.yield(port)
                    portContinuation.finish()
                })
        else { return nil }
        // Stopped gracefully (listener closed first, then open connections
        // drained), never by cancellation, which can race a late connection.
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let server = Task { try await services.run() }
        var iterator = portStream.makeAsyncIterator()
        let started = await iterator.next() != nil
        let value = started ? await body() : nil
        await services.triggerGracefulShutdown()
        _ = await server.result
        return value
    }

    public static func runCase(_ scenario: Scenario, profile: String, options: RunOptions) async -> CaseResult {
        let started = ContinuousClock.now
        let wallStart = Date()
        var result = CaseResult(
            id: scenario.id, name: scenario.name, profile: profile, level: scenario.level.rawValue, file: scenario.file,
            verdict: .error, findings: [], calls: [], journal: [], driverStderr: "", seconds: 0,
            driver: options.driverInfo?.name, driverVersion: options.driverInfo?.version)
        result.digest = scenario.digest
        // Known from the run's one hello: no driver process for a case it cannot run.
        if let reason = options.driverInfo?.cannotRun(scenario, profile: profile) {
            result.verdict = .skip
            result.reason = reason
            return result
        }
        if scenario.callsAnotherHost, let host = options.caseServerAdvertisedHost, !["127.0.0.1", "localhost"].contains(host) {
            result.verdict = .skip
            result.reason = "the case calls another host name of the server (localhost), which the client does not reach at \(host)"
            return result
        }
        var serverOptions = caseServerOptions(profile: profile, options: options)
        scenario.server.apply(to: &serverOptions)
        let mock: Authmock
        do {
            mock = try await Authmock(options: serverOptions, state: try await .open(serverOptions))
        } catch {
            result.reason = "the scenario's server settings were refused: \(error)"
            return result
        }
        if await serving(mock, { await converse(&result) }) == nil {
            result.reason = "the in-process server did not start"
        }
        await CaseServerState.discard(mock)
        let elapsed = ContinuousClock.now - started
        result.seconds = elapsed.inSeconds
        return result

        /// The case proper, while the server runs.
        func converse(_ result: inout CaseResult) async {

            let client = mock.control.client
            let (conversation, stderr) = await DriverLink.with(options, environment: environment(options, mock: mock, profile: profile)) { channel in
                // The timeout runs from when the driver is there (an attached
                // client may first finish another case).
                let deadline = ContinuousClock.now + .milliseconds(Int(scenario.timeout * 1000))
                let play = Play(scenario: scenario, profile: profile, mock: mock, deadline: deadline, start: wallStart)
                return try await play.run(channel) {
                    hello(id: $0, mock: mock, profile: profile, client: client, driver: options.driverInfo, attached: options.attach != nil)
                }
            }
            result.driverStderr = stderr
            do {
                let outcome = try conversation.get()
                result.calls = outcome.calls.map(\.summary)
                result.causes = outcome.causes
                result.driver = outcome.driver
                result.driverVersion = outcome.version
                switch outcome.stop {
                case .unsupported(let reason):
                    result.verdict = .skip
                    result.reason = reason
                case .none, .failed:
                    result.findings = outcome.findings
                }
            } catch let failure as DriverFailure {
                result.verdict = .error
                result.reason = failure.description
            } catch {
                result.verdict = .error
                result.reason = "\(error)"
            }
            // The verdict above already read it; a store failing since only shortens the evidence.
            let entries = (try? await mock.control.journal().entries) ?? []
            result.journal = entries.map { describe($0, start: wallStart) }
            if result.verdict != .skip && result.reason == nil {
                let failed = result.failedFindings
                result.verdict = failed.contains(where: \.isMust) ? .fail : failed.isEmpty ? .pass : .nonStrict
            }
            // A listed known failure stays visible, but does not fail the run.
            if let reason = options.expectedFailures[result.label] ?? options.expectedFailures[result.id] {
                if result.verdict == .fail || result.verdict == .nonStrict {
                    result.verdict = .skip
                    result.knownFailure = reason
                    result.reason = "known failure: \(reason)"
                } else if result.verdict == .pass {
                    result.reason = "listed as a known failure (\(reason)) but passed: remove it from the expected-failures file"
                }
            }
        }
    }
}

/// One case's steps against one driver conversation.
private struct Play: Sendable {
    let scenario: Scenario
    let profile: String
    let mock: Authmock
    let deadline: ContinuousClock.Instant
    let start: Date

    enum Stop: Sendable {
        /// The driver cannot run this case: the reason.
        case unsupported(String)
        case failed

        var isUnsupported: Bool { if case .unsupported = self { true } else { false } }
    }

    struct Outcome: Sendable {
        var calls: [CallRecord]
        var findings: [Finding]
        var stop: Stop?
        var driver: String?
        var version: String?
        /// When the driver answered `logout` (the app had signed the user out).
        var signedOutAt: Date?
        /// Each `login` step, from when it was sent to when the driver answered.
        var signInSteps: [ClosedRange<Date>] = []
        /// What the failed findings come from.
        var causes: [Cause]?
    }

    func run(_ channel: DriverChannel, hello: @Sendable (String) -> RunnerMessage) async throws -> Outcome {
        var performance = Performance(play: self, channel: channel)
        guard try await performance.greet(hello) else {
            try? await shutdown(channel)
            return performance.outcome
        }
        for (index, step) in scenario.steps.enumerated() {
            guard try await performance.perform(step, number: index + 1) else { break }
        }
        try await performance.finish()
        try await judge(&performance.outcome)
        try await shutdown(channel)
        return performance.outcome
    }

    /// The case's expectations over what the client did, and what the failures come from.
    func judge(_ outcome: inout Outcome) async throws {
        var judged: Observation?
        if outcome.stop == nil {
            let seen = try await observation(outcome)
            judged = seen
            outcome.findings += scenario.expect.evaluate(seen, level: scenario.level)
            outcome.findings += scenario.should?.evaluate(seen, level: .should) ?? []
            outcome.findings += CallEvidence.findings(seen)
            if let signIns = SuperfluousSignIns.finding(seen) { outcome.findings.append(signIns) }
        }
        // What the failures come from, a case stopped by a failed step too (a refresh it waited for never came).
        let failed = outcome.findings.filter { !$0.passed }
        if !failed.isEmpty, outcome.stop?.isUnsupported != true {
            let seen: Observation
            if let judged { seen = judged } else { seen = try await observation(outcome) }
            let causes = Causes.diagnose(seen, failed: failed)
            outcome.causes = causes.isEmpty ? nil : causes
        }
        // A finding that cites "the case's reports" names them.
        if !scenario.reports.isEmpty {
            for index in outcome.findings.indices where outcome.findings[index].rule == Rules.caseReports {
                outcome.findings[index].rule = "the case's reports: " + scenario.reports.joined(separator: ", ")
            }
        }
    }

    func observation(_ outcome: Outcome) async throws -> Observation {
        var observation = Observation(
            entries: try await mock.control.journal().entries, calls: outcome.calls, tokens: TokenFacts(try await mock.control.tokens()),
            start: start,
            endpointPaths: Set(mock.profile.endpointPaths))
        observation.signedOutAt = outcome.signedOutAt
        observation.signInSteps = outcome.signInSteps
        return observation
    }

    func shutdown(_ channel: DriverChannel) async throws {
        let id = try await channel.post { .shutdown(id: $0) }
        _ = try await channel.answer(id, deadline: .now + .seconds(3))
    }
}

/// One conversation's steps as they happen: the calls sent and their
/// answers, and the findings of steps that went wrong. Each step is a method.
private struct Performance {
    let play: Play
    let channel: DriverChannel
    var outcome = Play.Outcome(calls: [], findings: [])
    private var nextCall = 1

    init(play: Play, channel: DriverChannel) {
        self.play = play
        self.channel = channel
    }

    /// Says hello; false when the driver cannot run this case (`outcome.stop` says why).
    mutating func greet(_ hello: @Sendable (String) -> RunnerMessage) async throws -> Bool {
        let greeting = try await channel.answer(try await channel.post(hello), deadline: play.deadline)
        guard greeting.ok else { throw DriverFailure.badAnswer(line: greeting.line, problem: "hello was refused") }
        outcome.driver = greeting.fields["driver"]
        outcome.version = greeting.fields["version"]
        let info = DriverInfo(name: outcome.driver, version: outcome.version, profiles: greeting.profiles, capabilities: greeting.capabilities ?? [])
        if let reason = info.cannotRun(play.scenario, profile: play.profile) {
            outcome.stop = .unsupported(reason)
            return false
        }
        return true
    }

    /// Performs step `number` (from 1); false when the case stops here.
    mutating func perform(_ step: Step, number: Int) async throws -> Bool {
        let control = play.mock.control
        switch step {
        case .login(let username, let password, let openID, let expected):
            return try await signIn(username: username, password: password, openID: openID, expected: expected, step: number)
        case .logout:
            return try await signOut(step: number)
        case .request(let spec, let wait):
            let index = try await send(spec)
            if wait { try await collect(index) }
        case .parallel(let specs):
            for spec in specs { _ = try await send(spec) }
        // A step the server refuses ends the case as an ERROR with its reason.
        case .rotateKeys(let grace): _ = try await control.rotateKeys(graceSeconds: grace)
        case .advanceClock(let seconds): _ = try await control.advanceClock(seconds: seconds)
        case .setClock(let offset): _ = try await control.setClock(offsetSeconds: offset)
        case .expire(let selector): _ = try await control.expire(selector)
        case .revoke(let selector): _ = try await control.revoke(selector)
        case .fault(let rule): control.addFault(rule)
        case .waitFor(.allCalls): try await collectAll()
        case .waitFor(.journal(let kinds, let count, let answered)):
            return try await waitForJournal(kinds, count: count, answered: answered, step: number)
        case .sleep(let seconds): try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        case .check(let expect):
            try await collectAll()
            outcome.findings += expect.evaluate(try await play.observation(outcome), level: .must).map { finding in
                var finding = finding
                finding.message = "at step \(number): " + finding.message
                finding.expectation = "check.\(finding.expectation)"
                return finding
            }
        }
        return true
    }

    /// After the last step: every answer in, and a call the driver could not express stops the case.
    mutating func finish() async throws {
        if outcome.stop == nil { try await collectAll() }
        if outcome.stop == nil, let reason = await unsupportedCall() { outcome.stop = .unsupported(reason) }
    }

    private mutating func signIn(username: String, password: String, openID: Bool, expected: OutcomeKind?, step: Int) async throws -> Bool {
        let askedAt = Date()
        let id = try await channel.post { .login(id: $0, username: username, password: password, openid: openID ? true : nil) }
        let answer = try await channel.answer(id, deadline: play.deadline)
        outcome.signInSteps.append(askedAt...max(askedAt, answer.receivedAt))
        if let expected {
            // The sign-in must end as the case says (a client refusing a forged id token).
            let got = answer.ok ? OutcomeKind.ok : answer.outcome
            if got != expected {
                let accepted = answer.idTokenClaims.map { " (it accepted an id token saying \(ScenarioRunner.claimsText($0)))" } ?? ""
                let message = "step \(step): the sign-in should end \(expected.rawValue), the client reported \(got?.rawValue ?? "?")\(accepted)"
                outcome.findings.append(Finding(expectation: "login", passed: false, message: message, evidence: [answer.line]))
            }
            return true
        }
        guard answer.ok else {
            let reported = "\(answer.outcome?.rawValue ?? "?") \(answer.status.map(String.init) ?? "") \(answer.message ?? "")"
            return stop(
                Finding(
                    expectation: "login", passed: false, message: "step \(step): the client could not sign in: \(reported)", evidence: [answer.line]))
        }
        return true
    }

    private mutating func signOut(step: Int) async throws -> Bool {
        let answer = try await channel.answer(try await channel.post { .logout(id: $0) }, deadline: play.deadline)
        if answer.outcome == .unsupported {
            outcome.stop = .unsupported("the driver answered logout with unsupported (an optional operation: docs/driver-protocol.md)")
            return false
        }
        outcome.signedOutAt = answer.receivedAt
        guard answer.ok else {
            let message = "step \(step): the client could not sign out: \(answer.outcome?.rawValue ?? "?") \(answer.message ?? "")"
            return stop(Finding(expectation: "logout", passed: false, message: message, evidence: [answer.line]))
        }
        return true
    }

    /// By default counted on arrival: a request held by a delay fault counts while it is held.
    private mutating func waitForJournal(_ kinds: Set<RouteKind>, count: Int, answered: Bool, step: Int) async throws -> Bool {
        let control = play.mock.control
        let waitUntil = min(play.deadline, .now + .seconds(5))
        let seen = { answered ? try await control.journalCount(JournalFilter(kinds: kinds)) : control.arrivals(kinds) }
        while try await seen() < count {
            guard ContinuousClock.now < waitUntil else {
                if let reason = await unsupportedCall() {
                    outcome.stop = .unsupported(reason)
                    return false
                }
                let names = kinds.map(\.rawValue).sorted().joined(separator: "/")
                let message = "step \(step): waited 5 s for \(count) \(names) request(s); the client sent \(control.arrivals(kinds))"
                return stop(Finding(expectation: "wait_for", passed: false, message: message, evidence: []))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// A failed step ends the case: its finding, and false.
    private mutating func stop(_ finding: Finding) -> Bool {
        outcome.findings.append(finding)
        outcome.stop = .failed
        return false
    }

    /// Sends one call; its index in `outcome.calls`.
    private mutating func send(_ spec: CallSpec) async throws -> Int {
        let call = "c\(nextCall)"
        nextCall += 1
        var headers = spec.headers
        headers["X-Authmock-Call"] = call
        // `//foreign/...`: the same server under another name, standing in
        // for a third party. `path` stays a server path; the full URL goes
        // in `url` (the `url` capability, declared in hello).
        var (path, url) = (spec.path, String?.none)
        if spec.path.hasPrefix("//foreign/"), let port = play.mock.baseURL.split(separator: ":").last {
            path = String(spec.path.dropFirst("//foreign".count))
            url = "http://\(Observation.foreignHost):\(port)" + path
        }
        let sentAt = Date()
        let (target, full, fields, stream) = (path, url, headers, spec.bodyStream ? true : nil)
        let id = try await channel.post {
            .request(id: $0, method: spec.method, path: target, url: full, headers: fields, body: spec.body, bodyStream: stream)
        }
        outcome.calls.append(CallRecord(call: call, driverID: id, spec: spec, sentAt: sentAt))
        return outcome.calls.count - 1
    }

    private mutating func collect(_ index: Int) async throws {
        guard outcome.calls[index].answer == nil else { return }
        outcome.calls[index].answer = try await channel.answer(outcome.calls[index].driverID, deadline: play.deadline)
    }

    private mutating func collectAll() async throws {
        for index in outcome.calls.indices { try await collect(index) }
    }

    /// A call the driver answered `unsupported` (among the answers arrived so
    /// far) leaves nothing to judge: a GraphQL-only client asked for REST.
    private mutating func unsupportedCall() async -> String? {
        for index in outcome.calls.indices where outcome.calls[index].answer == nil {
            outcome.calls[index].answer = await channel.arrivedAnswer(outcome.calls[index].driverID)
        }
        guard let call = outcome.calls.first(where: { $0.answer?.outcome == .unsupported }) else { return nil }
        let message = call.answer?.message.map { ": \($0)" } ?? ""
        return "the driver cannot express \(call.call) (\(call.spec.method) \(call.spec.path)): it answered unsupported\(message)"
    }
}
