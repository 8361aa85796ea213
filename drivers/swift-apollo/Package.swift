// swift-tools-version:6.0
// Two authmock drivers for Apollo iOS 1.x, one per token-refresh recipe of
// its interceptor chain. Build and run on macOS (or Linux with the changes
// README.md lists) next to a checkout of authmock:
//     cd drivers/swift-apollo && swift build
//     swift run authmock run ../../scenarios --driver .build/debug/apollo-token-interceptor
// CI does not build this package: Apollo iOS is not in the package mirror CI uses.
import PackageDescription

let package = Package(
    name: "authmock-apollo-drivers",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(url: "https://github.com/apollographql/apollo-ios.git", exact: "1.25.7"),
        .package(name: "authmock", path: "../.."),
    ],
    targets: [
        // What both recipes share: the case's operations as codegen writes them, the token endpoint, a call as the app makes it.
        .target(
            name: "ApolloDriverSupport",
            dependencies: [
                .product(name: "Apollo", package: "apollo-ios"), .product(name: "ApolloAPI", package: "apollo-ios"),
                .product(name: "DriverKit", package: "authmock"),
            ]),
        // The seed's recipe: a token interceptor, a refresh on a 401 and on UNAUTHENTICATED in the body, chain.retry; one renewal per caller.
        .executableTarget(name: "apollo-token-interceptor", dependencies: ["ApolloDriverSupport"]),
        // The same chain over a token manager that shares one refresh.
        .executableTarget(name: "apollo-shared-refresh", dependencies: ["ApolloDriverSupport"]),
    ]
)
