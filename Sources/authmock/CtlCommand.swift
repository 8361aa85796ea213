import ArgumentParser
import AuthmockControlClient
import AuthmockModel
import AuthmockServer
import Foundation

/// `authmock ctl`: the control API for people at a shell. Each subcommand is
/// one `ControlOperation`, sent by `ControlClient` to a running server.
struct CtlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Steer a running server: clock, tokens, signing keys, faults, journal, verdicts.",
        discussion:
            "The server is --url (or AUTHMOCK_URL, default http://127.0.0.1:8080); the admin token, when the server needs one, is --admin-token or AUTHMOCK_ADMIN_TOKEN.",
        subcommands: [
            Routes.self, Reset.self, Clock.self, Advance.self, SetClock.self, Tokens.self, Expire.self, Revoke.self, Keys.self, Faults.self,
            Journal.self, Verdicts.self,
        ]
    )

    struct Connection: ParsableArguments {
        @Option(help: "Base URL of the server (default: AUTHMOCK_URL or http://127.0.0.1:8080).") var url: String?
        @Option(name: .customLong("admin-token"), help: "Admin token (default: AUTHMOCK_ADMIN_TOKEN).") var adminToken: String?

        var client: ControlClient {
            let environment = ProcessInfo.processInfo.environment
            return ControlClient(
                baseURL: url ?? environment["AUTHMOCK_URL"] ?? "http://127.0.0.1:8080", adminToken: adminToken ?? environment["AUTHMOCK_ADMIN_TOKEN"])
        }

        /// Sends one operation; the answer's body on success, a `CtlError` with the server's answer otherwise.
        func call(_ operation: ControlOperation, query: [String: String] = [:], body: Data? = nil) async throws -> Data {
            do {
                return try await client.send(operation, query: query, body: body)
            } catch {
                throw CtlError(error.description)
            }
        }

        func show(_ operation: ControlOperation, query: [String: String] = [:]) async throws {
            printJSON(try await call(operation, query: query))
        }

        /// With a body encoded from the control API's own input shapes.
        func show(_ operation: ControlOperation, body: some Encodable) async throws {
            printJSON(try await call(operation, body: try JSONEncoder().encode(body)))
        }

        /// Sends a body the user wrote as JSON text (a fault rule), as it is.
        func showRaw(_ operation: ControlOperation, json: String) async throws {
            guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)), object is [String: Any] else {
                throw ValidationError("the rule must be a JSON object, e.g. '{\"action\": {\"type\": \"respond\", \"status\": 503}}'")
            }
            printJSON(try await call(operation, body: Data(json.utf8)))
        }
    }

    struct Routes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "routes", abstract: "List the control routes.")
        @OptionGroup var connection: Connection
        func run() async throws { try await connection.show(.routes) }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Drop all tokens, fault rules and the journal; clock back to real time.")
        @OptionGroup var connection: Connection
        func run() async throws { try await connection.show(.reset) }
    }

    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the signing keys, or rotate them (RS256/ES256).", subcommands: [Show.self, Rotate.self], defaultSubcommand: Show.self)

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "show", abstract: "The algorithm, the current kid and retired keys.")
            @OptionGroup var connection: Connection
            func run() async throws { try await connection.show(.keys) }
        }

        struct Rotate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "A new signing key; the old one verifies for the grace.")
            @OptionGroup var connection: Connection
            @Option(help: "Seconds the old key keeps verifying (default: the server's --key-grace).") var grace: Double?
            func run() async throws { try await connection.show(.rotateKeys, body: ["graceSeconds": grace].compactMapValues { $0 }) }
        }
    }

    struct Clock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the server clock.")
        @OptionGroup var connection: Connection
        func run() async throws { try await connection.show(.clock) }
    }

    struct Advance: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move the server clock forward, e.g. `advance 61s`, `advance 5m`, `advance 1h`.")
        @Argument(help: "A duration: seconds, or a number with s, m, h or d.") var duration: String
        @OptionGroup var connection: Connection
        func run() async throws {
            try await connection.show(.advanceClock, body: ["seconds": try parseDuration(duration)])
        }
    }

    struct SetClock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-clock", abstract: "Set the clock's offset from real time, e.g. `set-clock 0` or `set-clock -- -30s`.")
        @Argument(help: "Offset: seconds, or a number with s, m, h or d; may be negative.") var offset: String
        @OptionGroup var connection: Connection
        func run() async throws {
            try await connection.show(.setClock, body: ["offsetSeconds": try parseDuration(offset, allowNegative: true)])
        }
    }

    struct Tokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List families, access and refresh tokens with their state.")
        @OptionGroup var connection: Connection
        func run() async throws { try await connection.show(.tokens) }
    }

    struct Verdicts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What the client did on its own so far, judged by the suite's expectations (a server started with --judge).")
        @OptionGroup var connection: Connection
        func run() async throws { try await connection.show(.verdicts) }
    }

    struct Selector: ParsableArguments {
        @Option(help: "access, refresh or all (default all).") var kind: String?
        @Option(help: "Only tokens of this user.") var subject: String?
        @Option(help: "Only tokens of this family (login), e.g. fam_1a2b.") var family: String?
        @Option(help: "Only the token with this jti (access) or id (refresh).") var jti: String?

        /// The selector as the control API takes it; the server checks the values and says what is wrong.
        var body: [String: String] {
            [("kind", kind), ("subject", subject), ("family", family), ("jti", jti)].reduce(into: [:]) { out, field in out[field.0] = field.1 }
        }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Expire the selected tokens now.")
        @OptionGroup var selector: Selector
        @OptionGroup var connection: Connection
        func run() async throws { try await connection.show(.expireTokens, body: selector.body) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke the selected tokens.")
        @OptionGroup var selector: Selector
        @OptionGroup var connection: Connection
        func run() async throws { try await connection.show(.revokeTokens, body: selector.body) }
    }

    struct Faults: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List, add or clear fault rules.",
            discussion:
                #"Example: authmock ctl faults add '{"match": {"kind": "refresh"}, "action": {"type": "respond", "status": 503, "headers": {"Retry-After": "2"}}}'"#
        )
        @Argument(help: "list, add or clear.") var action: String = "list"
        @Argument(help: "For add: the rule as JSON (see docs/control-api.md).") var rule: String?
        @OptionGroup var connection: Connection
        func run() async throws {
            switch action {
            case "list": try await connection.show(.faults)
            case "clear": try await connection.show(.clearFaults)
            case "add":
                guard let rule else { throw ValidationError("faults add needs the rule as JSON") }
                try await connection.showRaw(.addFault, json: rule)
            default: throw ValidationError("faults takes list, add or clear; got '\(action)'")
            }
        }
    }

    struct Journal: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show recorded requests (a table; --json for the raw answer), or `journal count`.")
        @Argument(help: "`count` to print only how many requests match.") var count: String?
        @Option(help: "Route kinds, comma-separated: login, refresh, token, resource, ...") var kind: String?
        @Option(help: "Only attempts of this X-Authmock-Call.") var call: String?
        @Option(help: "Only entries after this sequence number.") var since: Int?
        @Flag(help: "Print the JSON answer instead of a table.") var json = false
        @OptionGroup var connection: Connection

        func run() async throws {
            // As typed: the server checks the values and says what is wrong.
            let query = [("kind", kind), ("call", call), ("since", since.map(String.init))].reduce(into: [String: String]()) { $0[$1.0] = $1.1 }
            if let count {
                guard count == "count" else { throw ValidationError("journal takes only `count` as an argument; got '\(count)'") }
                return try await connection.show(.journalCount, query: query)
            }
            let data = try await connection.call(.journal, query: query)
            if json { return printJSON(data) }
            printJournalTable(data)
        }
    }
}

/// A failure of the server or the network (not of the command line): no usage text, exit status 1.
struct CtlError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Seconds in "61", "61s", "1.5m", "2h", "1d" (and a leading minus when allowed).
func parseDuration(_ text: String, allowNegative: Bool = false) throws -> Double {
    var body = Substring(text.trimmingCharacters(in: .whitespaces))
    var sign = 1.0
    if body.hasPrefix("-") {
        guard allowNegative else { throw ValidationError("'\(text)': the clock only moves forward here; use set-clock for a negative offset") }
        sign = -1
        body = body.dropFirst()
    }
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
    var factor = 1.0
    if let last = body.last, let unit = units[last] {
        factor = unit
        body = body.dropLast()
    }
    guard let value = Double(body), value.isFinite, value >= 0 else {
        throw ValidationError("'\(text)' is not a duration: use seconds or a number with s, m, h or d (e.g. 61s, 5m)")
    }
    return sign * value * factor
}

func printJSON(_ data: Data) {
    if let object = try? JSONSerialization.jsonObject(with: data),
        let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    {
        print(String(decoding: pretty, as: UTF8.self))
    } else {
        print(String(decoding: data, as: UTF8.self))
    }
}

/// One line per request: what a person scanning for "which call used which token" wants.
func printJournalTable(_ data: Data) {
    guard let page = try? ControlWire.decoder.decode(ControlWire.JournalPage.self, from: data) else { return printJSON(data) }
    print("seq   virtual time              kind      request                        credential                       status  error")
    func pad(_ text: String, _ width: Int) -> String { text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count) }
    for entry in page.entries {
        let token = entry.refreshToken ?? entry.accessToken
        let credential = token.map { "\($0.kind.rawValue) \($0.id.map { String($0.prefix(12)) } ?? "?") \($0.state)" } ?? entry.scheme
        let request = "\(entry.method) \(entry.path)" + (entry.call.map { " #\($0)" } ?? "")
        var status = "\(entry.status)"
        if entry.undelivered { status += "!" }
        if let fault = entry.fault { status += " f\(fault)" }
        let time = entry.virtualTime.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        print(
            pad("\(entry.seq)", 6) + pad(time, 26) + pad(entry.kind.rawValue, 10) + pad(request, 31) + pad(credential, 33) + pad(status, 8)
                + (entry.errorCode ?? ""))
    }
    if page.dropped > 0 { print("(\(page.dropped) older entries were dropped: the journal is full)") }
}
