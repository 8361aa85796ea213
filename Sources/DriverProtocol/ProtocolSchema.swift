import Foundation

/// The driver protocol as JSON Schema (draft 2020-12): every message the
/// runner sends, by `op`, and the two answers a driver gives (to `hello`,
/// and to every other message). `docs/driver-protocol.schema.json` is this,
/// written by `authmock schema --driver-protocol`; a test checks that each
/// message's members are exactly what `RunnerMessage` and `DriverMessage`
/// encode, and validates every example in docs/driver-protocol.md and every
/// driver's `hello` answer against it.
public enum ProtocolSchema {
    /// A member of a message: its JSON type, whether every message has it, what it means.
    public struct Member: Sendable {
        public enum Kind: Sendable {
            case string, boolean, stringList, stringMap, object
            case integer(ClosedRange<Int>)
            case number(ClosedRange<Double>)
            case oneOf([String])
        }
        public var name: String
        public var kind: Kind
        public var required: Bool
        public var doc: String

        init(_ name: String, _ kind: Kind, required: Bool = false, _ doc: String) {
            self.name = name
            self.kind = kind
            self.required = required
            self.doc = doc
        }
    }

    /// A message: its members beside `id` (and the runner's `op`).
    public struct Message: Sendable {
        public var name: String
        public var doc: String
        public var members: [Member]
    }

    /// Runner -> driver, one per `op`.
    public static let runnerMessages: [Message] = [
        Message(
            name: "hello", doc: "always first: the case server and the client registered on it",
            members: [
                Member("protocol", .integer(DriverProtocol.version...DriverProtocol.version), required: true, "the protocol version"),
                Member("baseURL", .string, required: true, "the case server, e.g. http://127.0.0.1:53211"),
                Member("profile", .string, required: true, "the server dialect the case runs (oauth2, or a dialect file's name)"),
                Member("clientId", .string, required: true, "the OAuth client registered on the server"),
                Member("clientSecret", .string, required: true, "its secret (empty for a public client)"),
                Member(
                    "dialect", .object,
                    "the `dialect` extension: the dialect's description, a dialect file's shape with every default filled in (docs/dialects.md); absent for oauth2"
                ),
                Member("caCertificate", .string, "the `tls` extension: the PEM certificate the case server presents"),
            ]),
        Message(
            name: "login", doc: "sign in the way the library does for the dialect",
            members: [
                Member("username", .string, required: true, "the user"),
                Member("password", .string, required: true, "the password"),
                Member("openid", .boolean, "the `oidc` extension: sign in as an OpenID Connect client"),
            ]),
        Message(
            name: "request", doc: "one call of the application, through the library",
            members: [
                Member("method", .string, required: true, "the HTTP method"),
                Member("path", .string, required: true, "a path on the server, never a full URL"),
                Member("url", .string, "the `url` extension: the full URL of a request to another host"),
                Member("headers", .stringMap, required: true, "headers forwarded unchanged on every attempt (X-Authmock-Call among them)"),
                Member("body", .string, "the body as UTF-8 text; absent for none"),
                Member("bodyStream", .boolean, "the `bodyStream` extension: hand the body over as a stream that can be read once"),
                Member(
                    "instance", .integer(1...64),
                    "the `instances` extension: which instance of the client makes the call, over the one token store (1, the app, when absent)"),
            ]),
        Message(name: "logout", doc: "the `logout` extension: the application signs the user out", members: []),
        Message(
            name: "cancel", doc: "the `cancel` extension: the application cancels a call still in flight",
            members: [Member("call", .string, required: true, "the id of the request message whose call is cancelled")]),
        Message(name: "shutdown", doc: "always last: answer, then exit with status 0", members: []),
    ]

    /// Driver -> runner: the answer to `hello`.
    public static let helloAnswer = Message(
        name: "helloAnswer", doc: "the answer to hello: what the driver wraps and what it can do",
        members: [
            Member("ok", .boolean, required: true, "false refuses the hello: the run stops"),
            Member("driver", .string, "the driver's name"),
            Member("version", .string, "the wrapped library's version"),
            Member("profiles", .stringList, "the dialects the library talks to by name (absent: every one the built-in cases name)"),
            Member("capabilities", .stringList, "the optional extensions the driver implements"),
            Member("renewalMargin", .number(0...3600), "seconds before expires_in runs out the client renews a token"),
            Member("message", .string, "why, when ok is false"),
        ])

    /// Driver -> runner: the answer to every other message.
    public static let answer = Message(
        name: "answer", doc: "the answer to login, request, logout, cancel and shutdown: what the application finally saw",
        members: [
            Member("ok", .boolean, required: true, "whether the application saw success"),
            Member("outcome", .oneOf(OutcomeKind.allCases.map(\.rawValue)), "what the application saw"),
            Member("status", .integer(100...599), "the last HTTP status the application saw"),
            Member("body", .string, "the body the application got"),
            Member("message", .string, "what the library said"),
            Member("idTokenClaims", .object, "the `oidc` extension: the claims of the id token the client accepted"),
        ])

    /// The whole document: `$defs` holds each message; the root accepts any of them.
    public static func jsonSchema() -> String {
        var defs: [String: Any] = [:]
        for message in runnerMessages { defs[message.name] = object(message, op: message.name) }
        defs[helloAnswer.name] = object(helloAnswer, op: nil)
        defs[answer.name] = object(answer, op: nil)
        let root: [String: Any] = [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "authmock driver protocol, version \(DriverProtocol.version)",
            "$comment":
                "Generated by `authmock schema --driver-protocol` from Sources/DriverProtocol/ProtocolSchema.swift; do not edit. The text is docs/driver-protocol.md.",
            "description":
                "One JSON object per line (or WebSocket message). The runner sends the messages under $defs named by their op; a driver answers hello with helloAnswer and every other message with answer.",
            "$defs": defs,
            "anyOf": (runnerMessages.map(\.name) + [helloAnswer.name, answer.name]).map { ["$ref": "#/$defs/\($0)"] },
        ]
        // The tree holds only strings, numbers, booleans, arrays and objects.
        let data = (try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func object(_ message: Message, op: String?) -> [String: Any] {
        var properties: [String: Any] = ["id": ["type": "string", "description": "the message's id; its answer carries the same"]]
        var required = ["id"]
        if let op {
            properties["op"] = ["const": op]
            required.append("op")
        }
        for member in message.members {
            var property = schema(member.kind)
            property["description"] = member.doc
            properties[member.name] = property
            if member.required { required.append(member.name) }
        }
        // Messages the runner sends may gain optional members (a driver ignores
        // those it does not know); an answer's are all listed, so a misspelt one shows.
        return [
            "type": "object", "description": message.doc, "properties": properties, "required": required,
            "additionalProperties": op != nil,
        ]
    }

    static func schema(_ kind: Member.Kind) -> [String: Any] {
        switch kind {
        case .string: ["type": "string"]
        case .boolean: ["type": "boolean"]
        case .stringList: ["type": "array", "items": ["type": "string"]]
        case .stringMap: ["type": "object", "additionalProperties": ["type": "string"]]
        case .object: ["type": "object"]
        case .integer(let range): ["type": "integer", "minimum": range.lowerBound, "maximum": range.upperBound]
        case .number(let range): ["type": "number", "minimum": range.lowerBound, "maximum": range.upperBound]
        case .oneOf(let values): ["enum": values]
        }
    }
}
