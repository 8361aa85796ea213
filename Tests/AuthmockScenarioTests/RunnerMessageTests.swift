@testable import AuthmockScenario
import DriverProtocol
import Foundation
import Testing

/// A runner message is one operation with its own fields, and on the wire
/// the flat object docs/driver-protocol.md shows: drivers in any language
/// read these lines, so the shape may only grow optional fields.
@Suite struct RunnerMessageTests {
    func line(_ message: RunnerMessage) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(message), as: UTF8.self)
    }

    @Test func eachOperationIsTheFlatObjectTheProtocolDocuments() throws {
        #expect(
            try line(.hello(id: "1", baseURL: "http://127.0.0.1:8080", profile: "oauth2", clientID: "demo", clientSecret: "demo-secret"))
                == #"{"baseURL":"http://127.0.0.1:8080","clientId":"demo","clientSecret":"demo-secret","id":"1","op":"hello","profile":"oauth2","protocol":1}"#
        )
        #expect(
            try line(.login(id: "2", username: "alice", password: "wonderland"))
                == #"{"id":"2","op":"login","password":"wonderland","username":"alice"}"#)
        #expect(
            try line(.request(id: "3", method: "POST", path: "/api/echo", url: nil, headers: ["X-Authmock-Call": "1"], body: "{}"))
                == #"{"body":"{}","headers":{"X-Authmock-Call":"1"},"id":"3","method":"POST","op":"request","path":"/api/echo"}"#)
        #expect(try line(.logout(id: "4")) == #"{"id":"4","op":"logout"}"#)
        #expect(try line(.shutdown(id: "5")) == #"{"id":"5","op":"shutdown"}"#)
    }

    @Test func decodingGivesTheOperationWithItsFields() throws {
        func decode(_ text: String) throws -> RunnerMessage { try JSONDecoder().decode(RunnerMessage.self, from: Data(text.utf8)) }
        #expect(
            try decode(#"{"id":"7","op":"request","method":"GET","path":"/api/items","bodyStream":true,"future":1}"#).operation
                == .request(.init(method: "GET", path: "/api/items", bodyStream: true)))
        #expect(try decode(#"{"id":"8","op":"login","openid":true}"#).operation == .login(.init(openid: true)))
        // An operation of a later protocol version: known to be unknown, not a decoding failure.
        #expect(try decode(#"{"id":"9","op":"teleport","to":"mars"}"#).operation == .unknown("teleport"))
        #expect(throws: DecodingError.self) { try decode(#"{"id":"10"}"#) }
        for message in [RunnerMessage.login(id: "1", username: "a", password: "b", openid: true), .logout(id: "2"), .shutdown(id: "3")] {
            #expect(try decode(try line(message)) == message)
        }
    }
}

/// A driver's line is decoded once, into the protocol's type, and what the
/// decoder stumbled on names the rule the line broke.
struct DriverLineProblemTests {
    @Test(arguments: [
        ("Hello from the library!", "not JSON"),
        (#"[1, 2]"#, "not JSON"),
        (#"{"ok": true}"#, "no string id"),
        (#"{"id": 7, "ok": true}"#, "no string id"),
        (#"{"id": "1"}"#, "no boolean ok"),
        (#"{"id": "1", "ok": "yes"}"#, "no boolean ok"),
        (#"{"id": "1", "ok": true, "outcome": "fine"}"#, "outcome must be one of ok, http_error"),
        (#"{"id": "1", "ok": true, "status": "200"}"#, "a field has the wrong type"),
        (#"{"id": "0", "ok": true, "profiles": "oauth2"}"#, "a field has the wrong type"),
    ])
    func eachBrokenRuleIsNamed(line: String, problem: String) throws {
        let error = try #require(throws: DecodingError.self) { try JSONDecoder().decode(DriverMessage.self, from: Data(line.utf8)) }
        let failure = DriverChannel.problem(error, line: line)
        #expect(failure.description.contains(problem), "\(line): \(failure.description)")
    }
}
