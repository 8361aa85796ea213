import AuthmockServer
import DriverProtocol
import Foundation
import TestSupport
import Testing

/// The driver protocol's published schema (docs/driver-protocol.schema.json)
/// is ProtocolSchema's, whose messages have exactly the members the
/// protocol's Swift types encode, and every message the protocol's pages
/// show validates against it with an independent validator (jsonschema).
/// Each driver's own `hello` answer is checked in EndToEndTests.
struct ProtocolSchemaTests {
    @Test func thePublishedSchemaIsTheGenerated() throws {
        let page = try String(contentsOf: packageRoot.appendingPathComponent("docs/driver-protocol.schema.json"), encoding: .utf8)
        #expect(page == ProtocolSchema.jsonSchema(), "docs/driver-protocol.schema.json is stale: run scripts/regen-docs.sh")
    }

    static func keys(_ value: some Encodable) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any]
        return Set((object ?? [:]).keys)
    }

    @Test func eachMessageHasTheMembersItsTypeEncodes() throws {
        // Every optional member set, so each is encoded.
        let full: [String: RunnerMessage] = [
            "hello": .hello(
                id: "0", baseURL: "https://127.0.0.1:1", profile: "envelope", clientID: "demo", clientSecret: "secret",
                dialect: BuiltinDialects.description("envelope"), caCertificate: "-----BEGIN CERTIFICATE-----"),
            "login": .login(id: "1", username: "alice", password: "wonderland", openid: true),
            "request": .request(
                id: "2", method: "POST", path: "/api/notes", url: "http://localhost:1/api/notes", headers: ["X-Authmock-Call": "c1"],
                body: "{}", bodyStream: true, instance: 2),
            "logout": .logout(id: "3"),
            "cancel": .cancel(id: "5", call: "2"),
            "shutdown": .shutdown(id: "4"),
        ]
        #expect(Set(full.keys) == Set(ProtocolSchema.runnerMessages.map(\.name)))
        for message in ProtocolSchema.runnerMessages {
            let encoded = try Self.keys(try #require(full[message.name]))
            #expect(encoded == Set(["id", "op"] + message.members.map(\.name)), "\(message.name)")
        }
        var answer = DriverMessage.hello(id: "0", driver: "d", version: "1", profiles: ["oauth2"], capabilities: ["url"], renewalMargin: 30)
        answer.outcome = .ok
        answer.status = 200
        answer.body = "{}"
        answer.message = "m"
        answer.idTokenClaims = ["sub": .string("alice")]
        let members = ProtocolSchema.helloAnswer.members.map(\.name) + ProtocolSchema.answer.members.map(\.name)
        #expect(try Self.keys(answer) == Set(["id"] + members))
    }

    /// Every `{"id"...}` the protocol's page shows, in code blocks and in
    /// the text, is a valid message; and the validator refuses a bad one.
    /// (writing-a-driver.md abbreviates its messages with `...`: a sketch, not the protocol.)
    @Test func everyExampleOnTheProtocolPagesValidates() async throws {
        let script = packageRoot.appendingPathComponent("scripts/protocol-check.py").path
        let page = packageRoot.appendingPathComponent("docs/driver-protocol.md").path
        let run = try await runProcess("python3", [script, "examples", page], mergeOutput: true)
        #expect(run.status == 0, "\(run.stdout)")
        let counted = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect((Int(counted.split(separator: " ").first ?? "") ?? 0) >= 20, "\(counted)")
        // The validator has teeth: a status as text, an unknown member of an answer, a hello without its baseURL.
        let bad = [
            #"{"id":"7","ok":true,"outcome":"ok","status":"200"}"#, #"{"id":"7","ok":true,"outcom":"ok"}"#,
            #"{"id":"0","op":"hello","protocol":1,"profile":"oauth2","clientId":"demo","clientSecret":""}"#,
        ]
        for line in bad {
            let refused = try await runProcess("python3", [script, "lines"], stdin: line + "\n", mergeOutput: true)
            #expect(refused.status == 1, "\(line): \(refused.stdout)")
        }
    }
}
