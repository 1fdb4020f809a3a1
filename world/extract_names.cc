// The heuristic extractor's words about people: common given names, and
// the roles and titles that name a position rather than someone. Like
// extract_words.cc, they only decide what text looks like.
#include <unordered_set>

#include "world/extract_internal.h"

namespace limbic::world::internal {
namespace {

// clang-format off
// Common given names from many languages, in lower case, so that "Priya
// said" or a lone "Priya is out today" reads as a person. Left out: names
// that are also everyday words likely to start a sentence or a heading
// ("will", "may", "mark", "bill", "hope", "joy", "max", "rich", "drew",
// "chase", "grace" stays: it rarely starts a note), and month names.
constexpr std::string_view kGivenNames[] = {
    // English
    "aaron", "abigail", "adam", "adrian", "aidan", "alan", "albert", "alex", "alexa", "alexander",
    "alexandra", "alice", "alicia", "alison", "allison", "amanda", "amber", "amelia", "amy", "andrea",
    "andrew", "andy", "angela", "anna", "anne", "annie", "anthony", "ashley", "austin", "ava", "barbara",
    "barry", "becky", "ben", "benjamin", "beth", "betty", "beverly", "bob", "bobby", "brad", "bradley",
    "brandon", "brenda", "brian", "brittany", "bruce", "bryan", "caleb", "cameron", "carl", "carol",
    "caroline", "carolyn", "catherine", "charles", "charlie", "charlotte", "chloe", "chris",
    "christian", "christina", "christine", "christopher", "claire", "colin", "connor", "craig",
    "cynthia", "dan", "dana", "daniel", "danielle", "dave", "david", "debbie", "deborah", "dennis",
    "derek", "diana", "diane", "donald", "donna", "doug", "douglas", "dylan", "edward", "eleanor",
    "elizabeth", "ella", "ellen", "emily", "emma", "eric", "erica", "erin", "ethan", "evan", "eve",
    "evelyn", "frank", "fred", "gary", "george", "gerald", "gloria", "gordon", "grace", "graham",
    "greg", "gregory", "hannah", "harold", "harry", "heather", "helen", "henry", "ian", "isaac",
    "isabel", "isabella", "jacob", "jake", "james", "jamie", "jane", "janet", "jason", "jeff",
    "jeffrey", "jennifer", "jenny", "jeremy", "jerry", "jesse", "jessica", "jill", "jim", "jimmy",
    "joan", "joe", "joel", "john", "jon", "jonathan", "jordan", "joseph", "josh", "joshua", "joyce",
    "judith", "judy", "julia", "julie", "justin", "karen", "kate", "katherine", "kathleen", "kathy",
    "katie", "keith", "kelly", "ken", "kenneth", "kevin", "kyle", "larry", "laura", "lauren", "leah",
    "liam", "linda", "lisa", "logan", "lori", "louis", "lucy", "luke", "lynn", "madison", "margaret",
    "maria", "marie", "marilyn", "martha", "martin", "mary", "matt", "matthew", "megan", "melissa",
    "michael", "michelle", "mike", "mildred", "molly", "nancy", "natalie", "nathan", "neil",
    "nicholas", "nick", "nicole", "noah", "oliver", "olivia", "owen", "pamela", "patricia", "patrick",
    "paul", "peter", "philip", "phillip", "rachel", "ralph", "randy", "rebecca", "richard", "rick",
    "robert", "roger", "ronald", "ross", "russell", "ruth", "ryan", "sam", "samantha", "samuel",
    "sandra", "sara", "sarah", "scott", "sean", "sharon", "shirley", "simon", "sophia", "sophie",
    "stephanie", "stephen", "steve", "steven", "stuart", "susan", "tammy", "teresa", "terry",
    "theresa", "thomas", "tim", "timothy", "tina", "todd", "tom", "tony", "tracy", "travis", "tyler",
    "valerie", "victoria", "vincent", "walter", "wayne", "wendy", "william", "zach", "zachary", "zoe",
    // Spanish, Portuguese, Italian, French
    "alejandro", "alessandro", "alfonso", "ana", "andrés", "antonio", "beatriz", "bruno", "camila",
    "carla", "carlos", "carmen", "catalina", "chiara", "clara", "cristina", "diego", "eduardo",
    "elena", "emilio", "enrique", "fernanda", "fernando", "francesca", "francisco", "gabriel",
    "gabriela", "giorgio", "giovanni", "giulia", "guillermo", "inês", "ines", "isabela", "javier",
    "joão", "jorge", "josé", "juan", "julián", "lorenzo", "lucas", "lucía", "lucia", "luis", "luisa",
    "marco", "marcos", "mariana", "mario", "marta", "mateo", "matteo", "miguel", "pablo", "paola",
    "pedro", "rafael", "raúl", "ricardo", "roberto", "rodrigo", "rosa", "sergio", "sofía", "sofia",
    "tomás", "valentina", "alain", "amélie", "antoine", "aurélie", "camille", "céline", "chloé",
    "claude", "étienne", "françois", "guillaume", "hélène", "jacques", "jean", "julien", "léa",
    "louise", "lucien", "manon", "margaux", "mathieu", "nicolas", "olivier", "pierre", "rené",
    "sébastien", "théo", "thierry", "yves",
    // German, Dutch, Nordic
    "anders", "astrid", "birgit", "bjorn", "björn", "dieter", "elin", "erik", "felix", "finn", "frida",
    "freya", "hans", "heike", "ingrid", "jens", "jonas", "jürgen", "karin", "karl",
    "katrin", "klaus", "lars", "lena", "lukas", "magnus", "maja", "matthias", "mette", "niklas",
    "nils", "ole", "sanne", "sigrid", "stefan", "sven", "thijs", "tobias", "ulrike", "wolfgang",
    // Slavic, Greek, Hungarian
    "agnieszka", "aleksandr", "alexei", "anastasia", "andrei", "anya", "boris", "dmitri", "dmitry",
    "ekaterina", "igor", "irina", "ivan", "katarzyna", "kateřina", "marek", "milan", "natasha",
    "nadia", "nikolai", "oksana", "olga", "pavel", "piotr", "sasha", "sergei", "svetlana", "tatiana",
    "tomasz", "vladimir", "yuri", "zofia", "dimitris", "eleni", "giorgos", "nikos", "katalin",
    "zoltán",
    // South Asian
    "aarav", "aditi", "aditya", "amit", "ananya", "anil", "anita", "anjali", "arjun", "arun", "deepak",
    "deepa", "divya", "gaurav", "isha", "kavya", "kiran", "krishna", "lakshmi", "manish", "meera",
    "neha", "nikhil", "pooja", "pradeep", "prakash", "pranav", "priya", "priyanka", "rahul", "raj",
    "rajesh", "ramesh", "ravi", "rohan", "rohit", "sanjay", "shreya", "shruti", "sneha", "sunil",
    "sunita", "suresh", "tanvi", "varun", "vijay", "vikram", "vivek", "imran", "ayesha", "bilal",
    "farhan", "sana", "usman", "zainab",
    // East and Southeast Asian
    "bao", "hana", "haruki", "haruto", "hiroshi", "jia", "jin", "jing", "ji-woo", "jun",
    "kenji", "kaito", "lian", "mei", "min-jun", "ming", "minh", "naoko", "sakura", "satoshi",
    "seo-yeon", "shin", "takeshi", "wei", "xiao", "xin", "yan", "yuki", "yumi", "yusuke", "yuto",
    "hyun", "ji-ho", "soo", "thanh", "linh", "anh", "siti", "putri", "arief",
    // Arabic, Turkish, Persian, Hebrew
    "ahmed", "ali", "amir", "amina", "aisha", "ayşe", "emre", "fatima", "hassan", "hussein", "karim",
    "khalid", "layla", "leila", "mehmet", "mohamed", "mohammed", "mustafa", "nour", "omar", "rami",
    "reza", "samir", "tariq", "yasmin", "youssef", "yusuf", "zeynep", "dariush", "mina",
    "parisa", "shirin", "avi", "eitan", "noa", "tamar", "yael", "yosef",
    // African
    "abena", "ade", "adebayo", "adwoa", "akua", "ama", "amara", "ayodele", "babajide", "chidi",
    "chinedu", "chioma", "emeka", "kofi", "kwabena", "kwame", "kwasi", "lerato", "nia", "ngozi",
    "nkechi", "obinna", "olu", "oluwaseun", "sipho", "thabo", "themba", "tunde", "wanjiru", "yaw",
    "zanele", "zola",
};

// Positions and titles: "the CTO", "our new VP", "a Staff Engineer". Alone
// they name no one, and "VP of Engineering" is a title, not a department
// to remember.
constexpr std::string_view kRoleWords[] = {
    "ceo", "cto", "cfo", "coo", "cio", "cmo", "cpo", "cso", "ciso", "cro", "vp", "svp", "evp", "avp",
    "pm", "pms", "tpm", "em", "sre", "sres", "swe", "sde", "ic", "hr", "gm", "md", "director",
    "directors", "manager", "managers", "head", "lead", "leads", "engineer", "engineers", "intern",
    "interns", "founder", "founders", "cofounder", "co-founder", "president", "chair", "chairman",
    "chairwoman", "principal", "staff", "senior", "junior", "architect", "designer", "analyst",
    "recruiter", "consultant", "contractor", "advisor", "adviser", "officer", "executive", "chief",
    "team", "committee", "board",
};
// clang-format on

}  // namespace

bool IsGivenName(std::string_view lower) {
  static const std::unordered_set<std::string_view> names(std::begin(kGivenNames),
                                                          std::end(kGivenNames));
  return names.count(lower) != 0;
}

bool IsRoleWord(std::string_view lower) {
  static const std::unordered_set<std::string_view> words(std::begin(kRoleWords),
                                                          std::end(kRoleWords));
  return words.count(lower) != 0;
}

}  // namespace limbic::world::internal
