#!/usr/bin/perl
# authmock driver (stdio, protocol version 1) for LWP::Authen::OAuth2 (Debian's
# liblwp-authen-oauth2-perl). Recipe: the module's POD for an application
# that calls an API from several processes at once: every worker builds its
# own $oauth2 from the saved token_string, save_tokens stores what the service
# provider returns, and the prerefresh hook hands over tokens another worker
# already refreshed "so that only one of them will try to refresh tokens".
# Perl applications run concurrent calls as processes (a preforking server),
# so each call here is a forked worker; refresh before expiry and on an
# invalid_token 401 is the module's own (LWP::Authen::OAuth2::AccessToken).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl-common";
use AuthmockDriver;
use HTTP::Request;
use JSON::PP;
use LWP::Authen::OAuth2;

my $driver = AuthmockDriver->new;
my $store = $driver->dir . "/token_string";    # the application's token store
my $hello;

sub saved_token_string {
    open my $in, '<', $store or return undef;
    local $/;
    return scalar <$in>;
}

sub save_tokens {
    my ($token_string) = @_;
    open my $out, '>', "$store.$$" or die "save: $!";
    print $out $token_string;
    close $out;
    rename "$store.$$", $store or die "save: $!";
}

sub oauth2 {
    my %saved = (token_string => saved_token_string());
    delete $saved{token_string} unless defined $saved{token_string};
    return LWP::Authen::OAuth2->new(
        client_id => $hello->{clientId}, client_secret => $hello->{clientSecret},
        token_endpoint => "$hello->{baseURL}/oauth/token", authorization_endpoint => "$hello->{baseURL}/oauth/authorize",
        is_strict => 0,    # lets request_tokens send the password grant's fields
        save_tokens => \&save_tokens, %saved,
        prerefresh => sub {
            my ($self) = @_;
            my $saved = saved_token_string() // return undef;
            my $theirs = eval { decode_json($saved)->{access_token} } // '';
            return $theirs ne $self->access_token->{access_token} ? $saved : undef;
        });
}

# The application's view of a failed refresh (the module's error handler
# croaks): an OAuth 2.0 error answer ends the session unless it says the
# server is down; anything else (no JSON, no answer) is this call's error.
sub refused {
    my ($error) = @_;
    my ($code) = $error =~ /^OAuth2 error: (\w+)/;
    return { outcome => 'reauth_required', message => $error } if $code && $code !~ /^(temporarily_unavailable|server_error)$/;
    return { outcome => 'transport_error', message => $error };
}

sub work {
    my $message;
    ($message, $hello) = @_;
    my $client = oauth2();
    if ($message->{op} eq 'login') {
        eval { $client->request_tokens(grant_type => 'password', username => $message->{username}, password => $message->{password}); 1 }
          or return { outcome => 'http_error', status => 400, message => "$@" };
        return { outcome => 'ok' };
    }
    my $url = $message->{url} // "$hello->{baseURL}$message->{path}";
    my $request = HTTP::Request->new($message->{method}, $url, [%{ $message->{headers} // {} }], $message->{body});
    my $response = eval { $client->request($request) } or return refused("$@");
    return AuthmockDriver::lwp_outcome($response);
}

$driver->serve('perl-lwp-authen-oauth2', "$LWP::Authen::OAuth2::VERSION (Debian)", \&work);
