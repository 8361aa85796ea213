import AuthmockCore
import AuthmockModel
import AuthmockServer
import DriverProtocol
import Foundation

/// One case's steps against one driver conversation.
struct Play: Sendable {
    let scenario: Scenario
    let profile: String
    /// The case's server as it was started: its address, dialect, settings and accounts.
    let mock: Authmock
    /// What the steps steer it with and read back from: the protocol a mock
    /// in this process and one over the control API both speak.
    let steering: any MockSteering
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
        /// The driver's `hello` answer, as it sent it.
        var hello: String?
        /// When the driver answered `logout` (the app had signed the user out).
        var signedOutAt: Date?
        /// When the runner sent `logout`.
        var signOutRequestedAt: Date?
        /// Each `login` step, from when it was sent to when the driver answered.
        var signInSteps: [ClosedRange<Date>] = []
        /// What the failed findings come from.
        var causes: [Cause]?
        /// The last journal entry (`seq`) the verdict read; 0 for an empty journal.
        var judgedThrough: Int?
        /// Fault rules the case's steps installed: (rule id, step number).
        var faults: [(id: Int, step: Int)] = []
        /// Rules a `clear_faults` step removed, as they were then: the
        /// journal still names what they did, and whether they fired.
        var clearedFaults: [FaultRuleView] = []
        /// What the report should say beside the verdict (a fault that never fired).
        var notes: [String] = []
    }

    /// `greeted`: the driver has answered hello (its start is over).
    func run(_ channel: DriverChannel, greeted: () -> Void = {}, hello: @Sendable (String) -> RunnerMessage) async throws -> Outcome {
        var performance = Performance(play: self, channel: channel)
        let admitted = try await performance.greet(hello)
        greeted()
        guard admitted else {
            try? await shutdown(channel)
            return performance.outcome
        }
        do {
            for (index, step) in scenario.steps.enumerated() {
                guard try await performance.perform(step, number: index + 1) else { break }
            }
            try await performance.finish()
        } catch let failure as DriverFailure {
            // A call still going at the deadline is a hang (ERROR), unless the
            // client was still sending past the case's bound: then it is a
            // client that retries without end, and that is the verdict.
            guard case .unanswered = failure, let past = try await pastTheBound(performance.outcome) else { throw failure }
            performance.outcome.findings += [
                past,
                Finding(
                    expectation: "wait_for", passed: false,
                    message: "\(failure.description): the client was still sending when the case's time ran out", evidence: []),
            ]
            performance.outcome.stop = .failed
            // Its cause is known; a journal of thousands of requests is not read again for it.
            performance.outcome.causes = [Causes.unbounded]
            return performance.outcome
        }
        try await judge(&performance.outcome)
        // The verdict is in: how slowly the driver then exits (a loaded
        // machine, workers to reap) says nothing of its refresh logic. One
        // that does not answer is killed by the link.
        try? await shutdown(channel)
        try? await rediagnose(&performance.outcome)
        return performance.outcome
    }

    /// The case's expectations over what the client did, and what the failures come from.
    func judge(_ outcome: inout Outcome) async throws {
        var judged: Observation?
        if outcome.stop == nil {
            let seen = try await observation(outcome)
            judged = seen
            outcome.judgedThrough = seen.entries.last?.seq ?? 0
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
        // A fault that never fired tested nothing: said, whatever the verdict.
        let fired = Dictionary(try await faults(clearedBefore: outcome.clearedFaults).map { ($0.id, $0.fired) }) { a, _ in a }
        for (id, step) in outcome.faults where fired[id] == 0 {
            outcome.notes.append("the fault rule of step \(step) never fired: no request matched it, so the case did not test what it injects")
        }
        // A finding that cites "the case's reports" names them.
        if !scenario.reports.isEmpty {
            for index in outcome.findings.indices where outcome.findings[index].rule == Rules.caseReports {
                outcome.findings[index].rule = "the case's reports: " + scenario.reports.joined(separator: ", ")
            }
        }
    }

    /// What the client sends just after its last answer belongs to the case:
    /// a Moya plugin hands the 401 on and its refresh reaches the server a
    /// few milliseconds later, and a verdict that read the journal at the
    /// last answer said "saw 0 refreshes" beside a report that showed one.
    /// The verdict waits until no request is in flight and none has arrived
    /// for `quiet`, for `bound` at most (a request a fault holds, a client
    /// that never stops: the journal then says what came in time). Once the
    /// driver has exited, `quiet: .zero` waits only for what is in flight.
    func settle(quiet: Duration = .milliseconds(30), bound: Duration = .milliseconds(500)) async throws {
        let control = steering
        let kinds = Set(RouteKind.allCases)
        let until = min(deadline, .now + bound)
        var arrived = try await control.arrivals(kinds)
        var quietSince = ContinuousClock.now
        while ContinuousClock.now < until {
            try await Task.sleep(for: .milliseconds(5))
            let now = try await control.arrivals(kinds)
            if now != arrived {
                (arrived, quietSince) = (now, .now)
            } else if ContinuousClock.now - quietSince >= quiet, try await control.journalCount(JournalFilter()) >= arrived {
                return
            }
        }
    }

    /// Requests that came after the verdict read the journal (a refresh a
    /// plugin started beside the last answer, slower than the quiet wait)
    /// count in no finding, but the report shows them: the causes are what
    /// the whole journal shows, so that no cause line contradicts it.
    func rediagnose(_ outcome: inout Outcome) async throws {
        guard outcome.stop == nil, let judged = outcome.judgedThrough, outcome.causes != nil else { return }
        // The driver has exited: what it sent last is answered and journaled
        // before this read, so the report's journal, read next, is the same.
        try await settle(quiet: .zero)
        let seen = try await observation(outcome)
        guard seen.entries.contains(where: { $0.seq > judged }) else { return }
        let causes = Causes.diagnose(seen, failed: outcome.findings.filter { !$0.passed })
        outcome.causes = causes.isEmpty ? nil : causes
    }

    /// The broken `max_requests` finding, if the journal already holds
    /// more requests than the case allows.
    func pastTheBound(_ outcome: Outcome) async throws -> Finding? {
        let bound = Expectations(scenario.expect.items.filter { $0 is MaxRequestsExpectation })
        guard !bound.isEmpty else { return nil }
        return bound.evaluate(try await observation(outcome), level: scenario.level).first { !$0.passed }
    }

    func observation(_ outcome: Outcome) async throws -> Observation {
        var observation = Observation(
            entries: try await steering.journal(JournalFilter()).entries, calls: outcome.calls, tokens: TokenFacts(try await steering.tokens()),
            start: start,
            endpointPaths: Set(mock.dialect.endpointPaths))
        observation.signedOutAt = outcome.signedOutAt
        observation.signOutRequestedAt = outcome.signOutRequestedAt
        observation.signInSteps = outcome.signInSteps
        observation.reuseRevokesLogin = mock.options.tokens.refreshReuse == .revokeLogin
        let scope = mock.dialect.answer(to: .insufficientScope(required: ""))
        observation.refusals = ["insufficient_scope": (scope.status, scope.row.code)]
        observation.noteFaults(try await faults(clearedBefore: outcome.clearedFaults), cleared: Set(outcome.clearedFaults.map(\.id)))
        return observation
    }

    /// The case's fault rules: those `clear_faults` removed, then those still installed.
    func faults(clearedBefore cleared: [FaultRuleView]) async throws -> [FaultRuleView] {
        try await Self.faults(steering, clearedBefore: cleared)
    }

    static func faults(_ steering: any MockSteering, clearedBefore cleared: [FaultRuleView]) async throws -> [FaultRuleView] {
        cleared + (try await steering.faults())
    }

    func shutdown(_ channel: DriverChannel) async throws {
        let id = try await channel.post { .shutdown(id: $0) }
        _ = try await channel.answer(id, deadline: .now + .seconds(3))
    }
}

/// One conversation's steps as they happen: the calls sent and their
/// answers, and the findings of steps that went wrong. Each step is a method.
struct Performance {
    let play: Play
    let channel: DriverChannel
    var outcome = Play.Outcome(calls: [], findings: [])
    private var nextCall = 1
    /// Requests of each kind that had arrived when the latest call was sent (`wait_for.since_last_request`).
    private var arrivalsAtLastSend: [RouteKind: Int] = [:]

    init(play: Play, channel: DriverChannel) {
        self.play = play
        self.channel = channel
    }

    /// Says hello; false when the driver cannot run this case (`outcome.stop` says why).
    mutating func greet(_ hello: @Sendable (String) -> RunnerMessage) async throws -> Bool {
        let greeting = try await channel.answer(try await channel.post(hello), deadline: play.deadline)
        guard greeting.ok else { throw DriverFailure.badAnswer(line: greeting.line, problem: "hello was refused") }
        outcome.driver = greeting.driver
        outcome.version = greeting.version
        outcome.hello = greeting.line
        let info = DriverInfo(name: outcome.driver, version: outcome.version, profiles: greeting.profiles, capabilities: greeting.capabilities ?? [])
        if let reason = info.cannotRun(play.scenario, profile: play.profile) {
            outcome.stop = .unsupported(reason)
            return false
        }
        return true
    }

    /// Performs step `number` (from 1); false when the case stops here.
    mutating func perform(_ step: Step, number: Int) async throws -> Bool {
        let control = play.steering
        switch step {
        case .login(let username, let password, let openID, let expected):
            return try await signIn(username: username, password: password, openID: openID, expected: expected, step: number)
        case .logout:
            return try await signOut(step: number)
        case .cancel(let call):
            return try await cancel(call, step: number)
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
        case .fault(let rule): outcome.faults.append((try await control.addFault(rule).id, number))
        case .clearFaults:
            outcome.clearedFaults += try await control.faults()
            _ = try await control.clearFaults()
        case .waitFor(.allCalls): try await collectAll()
        case .waitFor(.journal(let kinds, let count, let answered, let since)):
            let before = since ? kinds.reduce(0) { $0 + (arrivalsAtLastSend[$1] ?? 0) } : 0
            return try await waitForJournal(kinds, count: count, after: before, answered: answered, step: number)
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
        if outcome.stop == nil {
            try await collectAll()
            try await play.settle()
        }
        if outcome.stop == nil, let reason = await unsupportedCall() { outcome.stop = .unsupported(reason) }
    }

    private mutating func signIn(username: String?, password: String, openID: Bool, expected: OutcomeKind?, step: Int) async throws -> Bool {
        let askedAt = Date()
        let username = username ?? play.mock.directory.users.first?.username ?? Directory.defaultUser.username
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
        if outcome.signOutRequestedAt == nil { outcome.signOutRequestedAt = Date() }
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

    /// Cancels call number `number` (1-based), or the latest still unanswered.
    private mutating func cancel(_ number: Int?, step: Int) async throws -> Bool {
        await takeArrivedAnswers()
        let index: Int?
        if let number {
            index = outcome.calls.indices.contains(number - 1) ? number - 1 : nil
        } else {
            index = outcome.calls.indices.last { outcome.calls[$0].answer == nil }
        }
        guard let index else {
            let which =
                number.map { "call \($0), but the case had sent \(outcome.calls.count)" }
                ?? "the latest call in flight, but every call had been answered"
            return stop(Finding(expectation: "cancel", passed: false, message: "step \(step): cancel names \(which)", evidence: []))
        }
        outcome.calls[index].cancelledAt = Date()
        let target = outcome.calls[index].driverID
        let answer = try await channel.answer(try await channel.post { .cancel(id: $0, call: target) }, deadline: play.deadline)
        if answer.outcome == .unsupported {
            outcome.stop = .unsupported("the driver answered cancel with unsupported (an optional operation: docs/driver-protocol.md)")
            return false
        }
        return true
    }

    /// By default counted on arrival: a request held by a delay fault counts while it is held.
    /// `after`: requests of the kinds that had arrived before the latest call (`since_last_request`), not counted.
    private mutating func waitForJournal(_ kinds: Set<RouteKind>, count: Int, after: Int = 0, answered: Bool, step: Int) async throws -> Bool {
        let control = play.steering
        let waitUntil = min(play.deadline, .now + .seconds(5))
        let seen = { answered ? try await control.journalCount(JournalFilter(kinds: kinds)) : try await control.arrivals(kinds) }
        while try await seen() - after < count {
            guard ContinuousClock.now < waitUntil else {
                if let reason = await unsupportedCall() {
                    outcome.stop = .unsupported(reason)
                    return false
                }
                let names = kinds.map(\.rawValue).sorted().joined(separator: "/")
                let since = after > 0 ? " after the latest call was sent" : ""
                var message =
                    "step \(step): waited 5 s for \(count) \(names) request(s)\(since); the client sent \(try await control.arrivals(kinds) - after)"
                // A client the server had already refused its refresh token rightly sends no refresh:
                // the wait follows from what ended its session, which the cause says.
                var measured: [Measured]?
                if kinds.contains(.refresh), try await control.journal(JournalFilter()).entries.contains(where: { $0.kind == .refresh && $0.refused })
                {
                    message += ", and the server had refused its refresh token before, so it had none to send"
                    measured = [Measured.nothingToJudge]
                }
                return stop(Finding(expectation: "wait_for", passed: false, message: message, evidence: [], measured: measured))
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
            let scheme = play.mock.baseURL.hasPrefix("https:") ? "https" : "http"
            url = "\(scheme)://\(Observation.foreignHost):\(port)" + path
        }
        for kind in RouteKind.allCases { arrivalsAtLastSend[kind] = try await play.steering.arrivals([kind]) }
        let sentAt = Date()
        let (target, full, fields, stream) = (path, url, headers, spec.bodyStream ? true : nil)
        let id = try await channel.post {
            .request(
                id: $0, method: spec.method, path: target, url: full, headers: fields, body: spec.body, bodyStream: stream, instance: spec.instance)
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

    /// Records the answers that have arrived so far, without waiting for the others.
    private mutating func takeArrivedAnswers() async {
        for index in outcome.calls.indices where outcome.calls[index].answer == nil {
            outcome.calls[index].answer = await channel.arrivedAnswer(outcome.calls[index].driverID)
        }
    }

    /// A call the driver answered `unsupported` (among the answers arrived so
    /// far) leaves nothing to judge: a GraphQL-only client asked for REST.
    private mutating func unsupportedCall() async -> String? {
        await takeArrivedAnswers()
        guard let call = outcome.calls.first(where: { $0.answer?.outcome == .unsupported }) else { return nil }
        let message = call.answer?.message.map { ": \($0)" } ?? ""
        return "the driver cannot express \(call.call) (\(call.requestLine)): it answered unsupported\(message)"
    }
}
