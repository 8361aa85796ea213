import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

struct MetricsTests {
    /// Samples of the Prometheus text format: `name{labels} value` -> value.
    func samples(_ text: String) -> [String: Double] {
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { out[String(parts[0])] = value }
        }
        return out
    }

    @Test func metricsCountAKnownSequenceExactly() async throws {
        try await TestServer.run { server in
            let first = try await server.login()
            #expect(try await server.get("/api/me", bearer: first.access).status == .ok)
            server.mock.clock.advance(seconds: 301)
            #expect(try await server.get("/api/me", bearer: first.access).status == .unauthorized)
            #expect(try await server.refresh(first.refresh!).status == .ok)
            #expect(try await server.refresh(first.refresh!).status == .badRequest)
            _ = try await server.control(.post, "/faults", #"{"match": {"kind": "resource"}, "action": {"type": "respond", "status": 503}}"#)
            #expect(try await server.get("/api/items", bearer: nil).status == .serviceUnavailable)

            let response = try await server.send(.get, "/metrics")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let values = samples(response.text)
            #expect(values[#"authmock_requests_total{kind="login",status="200"}"#] == 1, "\(response.text)")
            #expect(values[#"authmock_requests_total{kind="resource",status="200"}"#] == 1)
            #expect(values[#"authmock_requests_total{kind="resource",status="401"}"#] == 1)
            #expect(values[#"authmock_requests_total{kind="resource",status="503"}"#] == 1)
            #expect(values[#"authmock_requests_total{kind="refresh",status="200"}"#] == 1)
            #expect(values[#"authmock_requests_total{kind="refresh",status="400"}"#] == 1)
            #expect(values[#"authmock_tokens_issued_total{type="access"}"#] == 2)
            #expect(values[#"authmock_tokens_issued_total{type="refresh"}"#] == 2)
            #expect(values[#"authmock_refreshes_total{outcome="ok"}"#] == 1)
            #expect(values[#"authmock_refreshes_total{outcome="failed"}"#] == 1)
            #expect(values["authmock_reuse_detections_total"] == 1)
            #expect(values[#"authmock_faults_fired_total{rule="1"}"#] == 1)
            // Scraping is not a client request: neither journaled nor counted.
            #expect(try await server.control(.get, "/journal/count").json()["count"] as? Int == 6)
        }
    }
}
