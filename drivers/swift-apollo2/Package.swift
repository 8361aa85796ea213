// swift-tools-version:6.1
// Two authmock drivers for Apollo iOS 2.x, one per token-refresh recipe of
// its async request chain (GraphQLInterceptor, HTTPInterceptor,
// RequestChain.Retry). Build and run on macOS (or Linux with the changes
// README.md lists) next to a checkout of authmock:
//     cd drivers/swift-apollo2 && swift build
//     swift run authmock run --driver drivers/swift-apollo2/.build/debug/apollo2-token-interceptor
// CI does not build this package: Apollo iOS is not in the package mirror CI uses.
import PackageDescription

let package = Package(
    name: "authmock-apollo2-drivers",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(url: "https://github.com/apollographql/apollo-ios.git", exact: "2.4.0"),
        .package(name: "authmock", path: "../.."),
    ],
    targets: [
        // What both recipes share: the case's operations as codegen writes them, the token endpoint, the chain, a call as the app makes it.
        .target(
            name: "Apollo2DriverSupport",
            dependencies: [
                .product(name: "Apollo", package: "apollo-ios"), .product(name: "ApolloAPI", package: "apollo-ios"),
                .product(name: "DriverKit", package: "authmock"),
            ]),
        // The recipe as 2.x's migration guide shapes it: renew in the interceptor and throw RequestChain.Retry; one renewal per caller.
        .executableTarget(name: "apollo2-token-interceptor", dependencies: ["Apollo2DriverSupport"]),
        // The same chain over a token manager that shares one refresh.
        .executableTarget(name: "apollo2-shared-refresh", dependencies: ["Apollo2DriverSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
