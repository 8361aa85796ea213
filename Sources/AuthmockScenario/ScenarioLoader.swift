public import AuthmockFileFormat
import DriverProtocol
import AuthmockCore
import AuthmockModel
import AuthmockServer
import Crypto
import Foundation
import Yams

/// Reads scenario files: YAML checked against `ScenarioFormat`, then built
/// into `Scenario` values. Every error names file:line:column.
public enum ScenarioLoader {
    /// Every `.yaml`/`.yml` file under the paths (directories recursively), sorted.
    public static func files(in paths: [String]) throws -> [String] {
        var found: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ScenarioError(file: path, line: 1, column: 1, message: "no such file or directory")
            }
            if isDirectory.boolValue {
                let enumerator = FileManager.default.enumerator(atPath: path)
                while let entry = enumerator?.nextObject() as? String {
                    // Files whose name starts with `_` hold data about the suite, not cases.
                    let name = (entry as NSString).lastPathComponent
                    if (entry.hasSuffix(".yaml") || entry.hasSuffix(".yml")) && !name.hasPrefix("_") {
                        found.append((path as NSString).appendingPathComponent(entry))
                    }
                }
            } else {
                found.append(path)
            }
        }
        return found.sorted()
    }

    public static func load(file: String) throws(ScenarioError) -> Scenario {
        try YAMLFile.readText(file).flatMap { parseAll($0, file: file) }.firstProblemThrown()
    }

    /// Every problem of a file, in file order (empty when it is valid).
    public static func problems(file: String) -> [ScenarioError] {
        YAMLFile.readText(file).flatMap { parseAll($0, file: file) }.problems
    }

    public static func problems(_ text: String, file: String) -> [ScenarioError] {
        parseAll(text, file: file).problems
    }

    public static func parse(_ text: String, file: String) throws(ScenarioError) -> Scenario {
        try parseAll(text, file: file).firstProblemThrown()
    }

    static func parseAll(_ text: String, file: String) -> Result<Scenario, YAMLFile.Problems> {
        do {
            return .success(try parseFirst(text, file: file))
        } catch let problems as YAMLFile.Problems {
            return .failure(problems)
        } catch let error as ScenarioError {
            return .failure(YAMLFile.Problems(list: [error]))
        } catch {
            return .failure(YAMLFile.Problems(list: [ScenarioError(file: file, line: 1, column: 1, message: "\(error)")]))
        }
    }

    private static func parseFirst(_ text: String, file: String) throws -> Scenario {
        let (value, checker) = try YAMLFile.checkedTree(text, file: file, spec: ScenarioFormat.scenario, expected: "a scenario mapping")
        var scenario = try Builder(checker: checker, file: file).scenario(value)
        scenario.digest = SHA256.hash(data: Data(text.utf8)).hexString
        return scenario
    }
}

/// Builds the model from checked values; what remains are cross-field rules.
struct Builder {
    let checker: SpecChecker
    let file: String

    func scenario(_ value: SpecValue) throws(ScenarioError) -> Scenario {
        let o = try value.object(checker, "scenario")
        var profiles: [String]
        switch (o["profile"], o["profiles"]) {
        case (let one?, nil): profiles = [try one.string(checker, "profile")]
        case (nil, let many?):
            profiles = try many.array(checker, "profiles").map { item throws(ScenarioError) in try item.string(checker, "profiles") }
            guard !profiles.isEmpty else { throw checker.error(at: many.mark, "profiles: list at least one dialect") }
        case (nil, nil): profiles = ["oauth2"]
        case (_, let many?): throw checker.error(at: many.mark, "give either profile or profiles, not both")
        }
        profiles = profiles.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
        let stepList = try o.required("steps", checker, at: value.mark)
        let steps = try stepList.array(checker, "steps").map { step throws(ScenarioError) in try self.step(step) }
        guard !steps.isEmpty else { throw checker.error(at: stepList.mark, "steps: a scenario needs at least one step") }
        let expect = try expectations(try o.required("expect", checker, at: value.mark))
        let should = try o["should"].map { value throws(ScenarioError) in try expectations(value) }
        let clockVariant = try o["clock_variant"].map { value throws(ScenarioError) in try self.clockVariant(value) }
        var scenario = Scenario(
            id: try o.required("id", checker, at: value.mark).string(checker, "id"),
            name: try o.required("name", checker, at: value.mark).string(checker, "name"),
            description: try o.required("description", checker, at: value.mark).string(checker, "description"),
            profiles: profiles, level: o["level"]?.string == "should" ? .should : .must,
            server: try server(o["server"]), steps: steps, expect: expect, should: should,
            reports: o["reports"]?.array?.compactMap(\.string) ?? [],
            timeout: o["timeout"]?.number ?? 20, file: file)
        scenario.clockVariant = clockVariant
        scenario.stepMarks = (stepList.array ?? []).map { $0.mark.map { (line: $0.line, column: $0.column) } }
        for (step, node) in zip(steps, stepList.array ?? []) {
            guard case .fault(let rule) = step, let warning = Self.unmatchable(rule) else { continue }
            scenario.warnings.append(checker.error(at: node.mark, warning))
        }
        // A cancel names a call sent before it (the runner numbers them in order).
        var sent = 0
        for (step, node) in zip(steps, stepList.array ?? []) {
            switch step {
            case .request: sent += 1
            case .parallel(let calls): sent += calls.count
            case .cancel(let call):
                if sent == 0 { throw checker.error(at: node.mark, "cancel: no call has been sent before this step") }
                if let call, call > sent {
                    throw checker.error(at: node.mark, "cancel.call: \(call) names a call not yet sent (\(sent) sent before this step)")
                }
            default: break
            }
        }
        // HS256's secret is shared, not published: it has no key to rotate.
        if let stepValues = stepList.array, let index = steps.firstIndex(where: { if case .rotateKeys = $0 { true } else { false } }) {
            let algorithm = scenario.server["signing_alg"].flatMap { if case .string(let name) = $0 { name } else { nil } } ?? "HS256"
            if !["RS256", "ES256"].contains(algorithm) {
                throw checker.error(
                    at: stepValues[index].mark, "rotate_keys: needs `server: {signing_alg: RS256}` (or ES256); \(algorithm) keys do not rotate")
            }
        }
        return scenario
    }

    /// Why a fault rule can match no request of a case, or nil: the runner
    /// names calls `c1`, `c2`, ... in the order it sends them, so another
    /// `X-Authmock-Call` value never fires and the case tests nothing.
    static func unmatchable(_ rule: FaultRule) -> String? {
        guard let header = rule.match.header, header.name.lowercased() == "x-authmock-call", let value = header.value else { return nil }
        let number = value.hasPrefix("c") ? Int(value.dropFirst()) : nil
        if let number, number >= 1, "c\(number)" == value { return nil }
        let hint = Int(value).map { " (did you mean c\($0)?)" } ?? ""
        return
            "fault: match header X-Authmock-Call: \"\(value)\" matches no call: calls are named c1, c2, ... in the order the case sends them\(hint), so this fault never fires"
    }

    func clockVariant(_ value: SpecValue) throws(ScenarioError) -> ClockVariant {
        let o = try value.object(checker, "clock_variant")
        let profiles = try o["profiles"].map { many throws(ScenarioError) in
            try many.array(checker, "clock_variant.profiles").map { item throws(ScenarioError) in try item.string(checker, "clock_variant.profiles") }
        }
        return ClockVariant(
            profiles: profiles, server: try server(o["server"]),
            expect: try o["expect"].map { value throws(ScenarioError) in try expectations(value) },
            should: try o["should"].map { value throws(ScenarioError) in try expectations(value) })
    }

    func server(_ value: SpecValue?) throws(ScenarioError) -> ServerSettings {
        try YAMLFile.settings(value, checker: checker, path: "server")
    }

    func call(_ value: SpecValue) throws(ScenarioError) -> CallSpec {
        let o = try value.object(checker, "request")
        if let operation = o["graphql"] { return try graphQLCall(o, operation, at: value.mark) }
        let path = try o.required("path", checker, at: value.mark).string(checker, "request.path")
        guard path.hasPrefix("/") else { throw checker.error(at: value.mark, "request.path must start with / (or //foreign/ for another host)") }
        return CallSpec(
            method: (o["method"]?.string ?? "GET").uppercased(), path: path,
            headers: o["headers"]?.object?.compactMapValues(\.string) ?? [:], body: o["body"]?.string,
            bodyStream: o["body_stream"]?.boolean ?? false, instance: o["instance"]?.integer)
    }

    /// `request: {graphql: {query, operation_name, variables}}`: a POST with
    /// the GraphQL-over-HTTP JSON body, keys sorted so every run sends the same bytes.
    private func graphQLCall(_ o: [String: SpecValue], _ operation: SpecValue, at mark: Mark?) throws(ScenarioError) -> CallSpec {
        if o["body"] != nil { throw checker.error(at: mark, "request: give `graphql` or `body`, not both (graphql: builds the body)") }
        if let method = o["method"]?.string, method.uppercased() != "POST" {
            throw checker.error(at: mark, "request.method: a graphql request is a POST (GET cannot carry a mutation), got \(method)")
        }
        let fields = operation.object ?? [:]
        var body: [String: Any] = ["query": fields["query"]?.string ?? ""]
        if let name = fields["operation_name"]?.string { body["operationName"] = name }
        if let variables = fields["variables"]?.object { body["variables"] = variables.mapValues(\.plain) }
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        let path = o["path"]?.string ?? "/graphql"
        guard path.hasPrefix("/") else { throw checker.error(at: mark, "request.path must start with /") }
        var headers = o["headers"]?.object?.compactMapValues(\.string) ?? [:]
        if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) { headers["Content-Type"] = "application/json" }
        return CallSpec(
            method: "POST", path: path, headers: headers, body: String(decoding: data, as: UTF8.self),
            bodyStream: o["body_stream"]?.boolean ?? false, graphQL: true, instance: o["instance"]?.integer)
    }

    func step(_ value: SpecValue) throws(ScenarioError) -> Step {
        guard let (name, body) = try value.object(checker, "step").first else { throw checker.error(at: value.mark, "an empty step") }
        switch name {
        case "login":
            let o = body.object ?? [:]
            var expect: OutcomeKind? = nil
            if let value = o["expect"] {
                guard let kind = OutcomeKind(rawValue: try value.string(checker, "login.expect")), [.ok, .reauthRequired, .httpError].contains(kind)
                else {
                    throw checker.error(at: value.mark, "login.expect: expected ok, reauth_required or http_error")
                }
                expect = kind
            }
            return .login(
                username: o["username"]?.string, password: o["password"]?.string ?? Directory.defaultUser.password,
                openID: o["openid"]?.boolean ?? false, expect: expect)
        case "rotate_keys":
            let grace = try body.object?["grace_seconds"].map { value throws(ScenarioError) in try value.number(checker, "rotate_keys.grace_seconds")
            }
            if let grace, grace < 0 { throw checker.error(at: body.mark, "rotate_keys.grace_seconds: must be >= 0") }
            return .rotateKeys(graceSeconds: grace)
        case "logout": return .logout
        case "clear_faults": return .clearFaults
        case "cancel":
            let call = try body.object?["call"].map { value throws(ScenarioError) in try value.integer(checker, "cancel.call") }
            if let call, call < 1 { throw checker.error(at: body.mark, "cancel.call: the first call is 1") }
            return .cancel(call: call)
        case "request":
            return .request(try call(body), wait: body.object?["wait"]?.boolean ?? true)
        case "parallel":
            let o = try body.object(checker, "parallel")
            switch (o["count"], o["request"], o["requests"]) {
            case (let count?, let request?, nil):
                return .parallel(Array(repeating: try call(request), count: try count.integer(checker, "parallel.count")))
            case (nil, nil, let list?):
                let items = try list.array(checker, "parallel.requests")
                guard !items.isEmpty else { throw checker.error(at: list.mark, "parallel.requests: list at least one request") }
                return .parallel(try items.map { item throws(ScenarioError) in try call(item) })
            case (nil, let request?, nil): return .parallel([try call(request)])
            default: throw checker.error(at: body.mark, "parallel: give count with request, or a list of requests")
            }
        case "advance_clock":
            let seconds = try body.number(checker, "advance_clock")
            guard seconds >= 0, seconds <= 10 * 365 * 86400 else {
                throw checker.error(at: body.mark, "advance_clock: seconds from 0 to ten years (set_clock moves the clock back)")
            }
            return .advanceClock(seconds: seconds)
        case "set_clock":
            let offset = try body.number(checker, "set_clock")
            guard abs(offset) <= 10 * 365 * 86400 else { throw checker.error(at: body.mark, "set_clock: at most ten years either way") }
            return .setClock(offsetSeconds: offset)
        case "sleep":
            let seconds = try body.number(checker, "sleep")
            guard seconds <= 30 else { throw checker.error(at: body.mark, "sleep: at most 30 seconds (keep real waits to the minimum)") }
            return .sleep(seconds: seconds)
        case "expire", "revoke":
            let selector: TokenSelector
            do {
                selector = try TokenSelector(StrictObject(body.plainObject, path: name))
            } catch {
                throw checker.error(at: body.mark, error.message)
            }
            return name == "expire" ? .expire(selector) : .revoke(selector)
        case "fault":
            do {
                return .fault(try FaultRule(StrictObject(body.plainObject, path: "fault")).checkedSituation())
            } catch {
                throw checker.error(at: body.mark, error.message)
            }
        case "wait_for":
            if body.string == "all" { return .waitFor(.allCalls) }
            let o = try body.object(checker, "wait_for")
            let kindValue = try o.required("kind", checker, at: body.mark)
            guard let kinds = RouteKind.parseMatch(try kindValue.string(checker, "wait_for.kind")) else {
                throw checker.error(at: kindValue.mark, "wait_for.kind: expected one of \(RouteKind.matchNames.joined(separator: ", "))")
            }
            let (answered, since) = (o["answered"]?.boolean ?? false, o["since_last_request"]?.boolean ?? false)
            if answered && since { throw checker.error(at: body.mark, "wait_for: since_last_request counts arrivals; it does not go with answered") }
            return .waitFor(
                .journal(
                    kinds: kinds, count: try o.required("count", checker, at: body.mark).integer(checker, "wait_for.count"),
                    answered: answered, sinceLastRequest: since))
        case "check": return .check(try expectations(body))
        default: throw checker.error(at: value.mark, "unknown step \(name)")
        }
    }

    func expectations(_ value: SpecValue) throws(ScenarioError) -> Expectations {
        try Expectations.build(value, checker: checker)
    }
}
